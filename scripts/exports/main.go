// Command exports counts the exported names of ctxfit's public packages: the
// exported top-level functions, types, variables and constants of every
// package outside internal/, examples/, scripts/, cmd/, e2e/, benchmarks/
// and testdata/ (test files and main packages left out), and the exported
// methods of exported types beside them. It prints one line per package,
// most exports first, then the totals:
//
//	go run ./scripts/exports            # from the repository root
//	go run ./scripts/exports -root DIR
//	go run ./scripts/exports -names     # and each package's names
//
// It reads the source with go/parser and follows no build tags: a name
// declared in files for several platforms counts once.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// skipped are the directories whose packages are not public API, by their
// name anywhere below the root.
var skipped = map[string]bool{
	"internal": true, "examples": true, "scripts": true, "cmd": true, "e2e": true,
	"benchmarks": true, "testdata": true, "node_modules": true,
}

// count is what one package exports.
type count struct {
	dir      string
	topLevel map[string]bool // exported top-level names
	methods  map[string]bool // Type.Method of exported methods on exported types
}

func main() {
	root := flag.String("root", ".", "the repository's root directory")
	names := flag.Bool("names", false, "list each package's exported names under its line")
	flag.Parse()
	counts, err := walk(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exports:", err)
		os.Exit(1)
	}
	slices.SortFunc(counts, func(a, b count) int {
		return cmp.Or(cmp.Compare(len(b.topLevel), len(a.topLevel)), cmp.Compare(a.dir, b.dir))
	})
	var top, methods int
	for _, c := range counts {
		fmt.Printf("%4d %4d  %s\n", len(c.topLevel), len(c.methods), c.dir)
		if *names {
			fmt.Printf("\t%s\n\t%s\n", strings.Join(sorted(c.topLevel), " "), strings.Join(sorted(c.methods), " "))
		}
		top += len(c.topLevel)
		methods += len(c.methods)
	}
	fmt.Printf("%d public packages: %d exported top-level names, %d with methods\n", len(counts), top, top+methods)
}

// sorted returns the keys of set in order.
func sorted(set map[string]bool) []string {
	return slices.Sorted(maps.Keys(set))
}

// walk returns the counts of the public packages below root.
func walk(root string) ([]count, error) {
	var counts []count
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != root && (skipped[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		c, ok, err := countDir(path)
		if err != nil {
			return err
		}
		if ok {
			rel, _ := filepath.Rel(root, path)
			c.dir = filepath.ToSlash(rel)
			counts = append(counts, c)
		}
		return nil
	})
	return counts, err
}

// countDir counts the exports of the package in dir; false when dir holds
// no Go package but main.
func countDir(dir string) (count, bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return count{}, false, err
	}
	c := count{topLevel: map[string]bool{}, methods: map[string]bool{}}
	fset := token.NewFileSet()
	found := false
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return count{}, false, err
		}
		if f.Name.Name == "main" {
			continue
		}
		found = true
		add(c, f)
	}
	return c, found, nil
}

// add counts the exports of f into c.
func add(c count, f *ast.File) {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				c.topLevel[d.Name.Name] = true
				continue
			}
			if recv := receiverType(d.Recv.List[0].Type); ast.IsExported(recv) {
				c.methods[recv+"."+d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						c.topLevel[s.Name.Name] = true
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							c.topLevel[n.Name] = true
						}
					}
				}
			}
		}
	}
}

// receiverType is the name of a method's receiver type: T of T, *T, T[P]
// and *T[P].
func receiverType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}
