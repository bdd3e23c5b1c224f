package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

const nested = `module github.com/ctxfit/ctxfit/mcpfit

go 1.26.0

require (
	github.com/ctxfit/ctxfit v0.0.0-00010101000000-000000000000
	github.com/ctxfit/ctxfit/gateway v0.0.0-00010101000000-000000000000
	github.com/modelcontextprotocol/go-sdk v1.8.0
)

require github.com/ctxfit/ctxfit/proxy v0.0.0 // indirect

replace (
	github.com/ctxfit/ctxfit => ../
	github.com/ctxfit/ctxfit/e2e => ../e2e
)

replace github.com/ctxfit/ctxfit/gateway => ../gateway
`

func TestTheReleasedGoModRequiresTheVersionAndReplacesNothing(t *testing.T) {
	assert.Equal(t, `module github.com/ctxfit/ctxfit/mcpfit

go 1.26.0

require (
	github.com/ctxfit/ctxfit v1.2.3
	github.com/ctxfit/ctxfit/gateway v1.2.3
	github.com/modelcontextprotocol/go-sdk v1.8.0
)

require github.com/ctxfit/ctxfit/proxy v1.2.3 // indirect
`, string(releasedGoMod([]byte(nested), "v1.2.3")))
}

func TestRequiredNamesTheCtxfitModulesRequiredNotThoseOnlyReplaced(t *testing.T) {
	assert.Equal(t, []string{"github.com/ctxfit/ctxfit", "github.com/ctxfit/ctxfit/gateway", "github.com/ctxfit/ctxfit/proxy"},
		required([]byte(nested)))
}

func TestAVersionMustBeSemantic(t *testing.T) {
	for _, v := range []string{"1.2.3", "v1.2", "v01.2.3", "latest"} {
		assert.ErrorContains(t, run(".", v, t.TempDir()), "not a semantic version", v)
	}
}
