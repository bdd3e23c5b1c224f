package ctxfit_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxParams is the most parameters an engine function takes: a function
// that needs more wants a struct carrying the request's state (the way a
// shaper does).
const maxParams = 5

func TestNoEngineFunctionTakesMoreThanFiveParameters(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var over []string
	parsed := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		parsed++
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := paramCount(fn.Type.Params); n > maxParams {
				over = append(over, fmt.Sprintf("%s: %s takes %d parameters", fset.Position(fn.Pos()), fn.Name.Name, n))
			}
		}
	}
	require.NotZero(t, parsed, "the root package's files are found")
	assert.Empty(t, over, "carry what these share in a struct")
}

// paramCount counts the parameters of a list: a, b int is two.
func paramCount(fields *ast.FieldList) int {
	n := 0
	for _, f := range fields.List {
		n += max(len(f.Names), 1)
	}
	return n
}
