package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// initHeavy are packages whose initialisation costs milliseconds that every
// subcommand would pay, used or not.
var initHeavy = []string{
	// compiles its JSON Schema meta-schemas at package initialisation
	// (8-17 ms); kin-openapi's openapi3 imports it.
	"github.com/santhosh-tekuri/jsonschema/v6",
	"github.com/getkin/kin-openapi/openapi3",
}

func TestTheCommandLinksNoPackageThatWorksAtInitialisation(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "list", "-deps", "-f", "{{.ImportPath}}", ".")
	cmd.Env = append(cmd.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.Output()
	require.NoError(t, err, "go list -deps: %s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/ctxfit/ctxfit/gateway", "go list -deps lists the command's packages")
	for _, p := range initHeavy {
		assert.NotContains(t, deps, p, "every subcommand would pay its initialisation")
	}
}
