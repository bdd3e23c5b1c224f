package ctxfit_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// engine is the import path of the root package.
const engine = "github.com/ctxfit/ctxfit"

// independent are the packages that must not depend on the engine: the
// drivers (store, cache and their backends), the settings (config), and
// the concern packages. The engine imports them, never the other way round.
// Import-path patterns, so that in the workspace (go.work) they also match
// the nested modules below these directories (store/redisstore,
// cache/rediscache, telemetry/otelsink).
var independent = []string{
	engine + "/store/...", engine + "/cache/...", engine + "/config/...",
	engine + "/budget/...", engine + "/cursor/...", engine + "/pagination/...", engine + "/summary/...", engine + "/chunk/...",
	engine + "/telemetry/...", engine + "/toon/...", engine + "/conversation/...",
}

func TestDriversSettingsAndConcernsDoNotImportTheEngine(t *testing.T) {
	// One line per package: its path, then every package it depends on
	// (not counting its tests).
	args := append([]string{"list", "-e", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`}, independent...)
	out := goCommand(t, nil, args...)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.NotEmpty(t, lines)
	var offenders []string
	for _, line := range lines {
		pkg, deps, _ := strings.Cut(line, " ")
		for dep := range strings.FieldsSeq(deps) {
			if dep == engine {
				offenders = append(offenders, pkg)
				break
			}
		}
	}
	assert.Empty(t, offenders, "these packages depend on %s; move what they need out of the engine", engine)
}

func TestTheEngineDoesNotImportTheCache(t *testing.T) {
	// The cache sits in front of a Fetch, put there by the adapters
	// (internal/cachedfetch); the engine knows nothing of it.
	out := goCommand(t, nil, "list", "-e", "-deps", "-f", "{{.ImportPath}}", engine)
	var cached []string
	for dep := range strings.FieldsSeq(string(out)) {
		if dep == engine+"/cache" || strings.HasPrefix(dep, engine+"/cache/") || dep == engine+"/internal/cachedfetch" {
			cached = append(cached, dep)
		}
	}
	assert.Empty(t, cached, "the engine depends on these cache packages; wrap the Fetch in the adapter instead")
}

// examples is the import path of the example programs. They are
// documentation: product code, tools and tests take their demo data from
// internal/demodata, never from here.
const examples = engine + "/examples"

func TestNoPackageOutsideExamplesImportsExamples(t *testing.T) {
	// One line per package of the workspace: its path, then its imports and
	// its tests' imports.
	out := goCommand(t, nil, "list", "-e", "-f",
		`{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`, engine+"/...")
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.NotEmpty(t, lines)
	var offenders []string
	for _, line := range lines {
		pkg, imports, _ := strings.Cut(line, " ")
		if pkg == examples || strings.HasPrefix(pkg, examples+"/") {
			continue
		}
		for imp := range strings.FieldsSeq(imports) {
			if imp == examples || strings.HasPrefix(imp, examples+"/") {
				offenders = append(offenders, pkg+" imports "+imp)
			}
		}
	}
	assert.Empty(t, offenders, "move what these packages need from examples/ to internal/demodata")
}
