package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSchemaIsUpToDate(t *testing.T) {
	want, err := generate(filepath.Join("..", "..", "settings"))
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join("..", "..", "schema.json"))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "config/schema.json is stale: run go generate ./config")
}
