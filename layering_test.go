package ctxfit_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
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
	// Every Go file of the repository outside examples/, tests and build
	// tags included, in every module (benchmarks/ is outside the workspace).
	var offenders []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "examples", "node_modules", "testdata", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if imp == examples || strings.HasPrefix(imp, examples+"/") {
				offenders = append(offenders, path+" imports "+imp)
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, offenders, "move what these files need from examples/ to internal/demodata")
}
