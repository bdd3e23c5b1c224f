package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWalkCountsTheExportsOfPublicPackagesOnly(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"lib/lib.go": `package lib

const A, b = 1, 2

var V int

type T struct{}

type hidden struct{}

func F() {}

func f() {}

func (T) M()          {}
func (*T) N()         {}
func (T) m()          {}
func (hidden) Exported() {}
`,
		"lib/lib_test.go":        "package lib\n\nfunc Test() {}\n",
		"lib/sub/sub.go":         "package sub\n\ntype G[P any] struct{}\n\nfunc (G[P]) M() {}\n",
		"internal/in/in.go":      "package in\n\nfunc F() {}\n",
		"examples/ex/ex.go":      "package ex\n\nfunc F() {}\n",
		"tool/main.go":           "package main\n\nfunc F() {}\n",
		"lib/testdata/data/d.go": "package data\n\nfunc F() {}\n",
	}
	for name, text := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	counts, err := walk(root)
	require.NoError(t, err)
	got := map[string][2]int{}
	for _, c := range counts {
		got[c.dir] = [2]int{len(c.topLevel), len(c.methods)}
	}
	assert.Equal(t, map[string][2]int{
		"lib":     {4, 2}, // A, V, T, F; T.M, T.N
		"lib/sub": {1, 1}, // G; G.M
	}, got)
}
