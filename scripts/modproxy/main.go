// Command modproxy writes a release of every published module of this
// repository, at one version, as a Go module proxy directory (the layout
// GOPROXY=file://DIR serves: <module>/@v/list, <version>.info, .mod, .zip),
// so that a release can be installed and tried before any tag is pushed:
//
//	go run ./scripts/modproxy -version v0.1.0 -o /tmp/proxy
//	GOPROXY=file:///tmp/proxy,https://proxy.golang.org GOSUMDB=off \
//		go install github.com/ctxfit/ctxfit/cmd/ctxfit@v0.1.0
//
// scripts/release.sh --proxy-dir runs it. For each module of go.work but
// the examples and the end-to-end tests, in the order of their
// requirements (a module after the ctxfit modules it requires; none may
// require an unpublished one, such as a test helper's), it takes
// the files git tracks in the module's directory (not those of a nested
// module), writes go.mod as the release has it (no replace directive; every
// ctxfit module required at the version) and lets `go mod tidy` write its
// go.sum, resolving the ctxfit modules from the directory being written and
// everything else as the go command is configured to (GOPROXY, the module
// cache).
//
// The result is what tags vX.Y.Z, mcpfit/vX.Y.Z, ... on a commit with those
// go.mod and go.sum files would serve.
package main

import (
	"archive/zip"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// root is the core module's path: every module of the repository is it or
// below it.
const root = "github.com/ctxfit/ctxfit"

// unpublished are the directories (relative to the repository) whose
// modules a release leaves out: programs to read and copy, and tests. A
// published module that requires one of them is an error: a user's go mod
// tidy could not resolve it.
var unpublished = []string{"examples/", "e2e", "benchmarks"}

func main() {
	version := flag.String("version", "", "the version to release, a semantic version such as v0.1.0 (required)")
	out := flag.String("o", "", "the directory to write the module proxy to (required; created if missing)")
	repo := flag.String("repo", ".", "the repository's root (its go.work lists the modules)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: modproxy -version vX.Y.Z -o DIR [-repo DIR]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(*repo, *version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

// semver is the form of a release version the go command accepts.
var semver = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$`)

type module struct {
	path string   // module path
	dir  string   // directory, relative to the repository
	reqs []string // the ctxfit modules it requires
}

func run(repo, version, out string) error {
	if !semver.MatchString(version) {
		return fmt.Errorf("-version %q is not a semantic version like v0.1.0 or v0.1.0-rc.1", version)
	}
	if out == "" {
		return errors.New("-o DIR is required: the directory to write the module proxy to")
	}
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	repo, err = filepath.Abs(repo)
	if err != nil {
		return err
	}
	mods, err := modules(repo)
	if err != nil {
		return err
	}
	order, err := sorted(mods)
	if err != nil {
		return err
	}
	tracked, err := gitFiles(repo)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "modproxy")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	for _, m := range order {
		fmt.Fprintf(os.Stderr, "== %s@%s\n", m.path, version)
		if err := release(repo, out, work, version, m, mods, tracked); err != nil {
			return fmt.Errorf("%s: %w", m.path, err)
		}
	}
	return nil
}

// modules returns the published modules of go.work, by path.
func modules(repo string) (map[string]*module, error) {
	cmd := exec.Command("go", "list", "-m", "-json")
	cmd.Dir = repo
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m: %w", err)
	}
	mods := map[string]*module{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		var m struct{ Path, Dir string }
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(repo, m.Dir)
		if err != nil {
			return nil, err
		}
		rel = filepath.ToSlash(rel)
		if slices.ContainsFunc(unpublished, func(p string) bool { return strings.HasPrefix(rel, p) }) {
			continue
		}
		mods[m.Path] = &module{path: m.Path, dir: rel}
	}
	for _, m := range mods {
		gomod, err := os.ReadFile(filepath.Join(repo, m.dir, "go.mod"))
		if err != nil {
			return nil, err
		}
		for _, p := range required(gomod) {
			if p == m.path {
				continue
			}
			if mods[p] == nil {
				return nil, fmt.Errorf("%s requires %s, which a release does not publish", m.path, p)
			}
			m.reqs = append(m.reqs, p)
		}
	}
	return mods, nil
}

// requireLine matches a requirement of a ctxfit module, in a require block
// or on its own line: the module path and its version.
var requireLine = regexp.MustCompile(`(?m)^(\s*(?:require\s+)?)(` + regexp.QuoteMeta(root) + `(?:/[A-Za-z0-9._/-]+)?)\s+(v\S+)`)

// required returns the ctxfit modules gomod requires (not those it only
// replaces).
func required(gomod []byte) []string {
	var out []string
	for _, m := range requireLine.FindAllSubmatch(withoutReplaces(gomod), -1) {
		out = append(out, string(m[2]))
	}
	return out
}

// replaceBlock and replaceLine match the replace directives of a go.mod.
var (
	replaceBlock = regexp.MustCompile(`(?ms)^replace\s*\(.*?^\)\s*\n?`)
	replaceLine  = regexp.MustCompile(`(?m)^replace\s+[^(\n].*\n?`)
)

func withoutReplaces(gomod []byte) []byte {
	return replaceLine.ReplaceAll(replaceBlock.ReplaceAll(gomod, nil), nil)
}

// sorted returns mods in an order where each module comes after the
// modules it requires.
func sorted(mods map[string]*module) ([]*module, error) {
	var order []*module
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(m *module) error
	visit = func(m *module) error {
		switch state[m.path] {
		case 1:
			return fmt.Errorf("the modules require each other in a cycle through %s", m.path)
		case 2:
			return nil
		}
		state[m.path] = 1
		for _, r := range m.reqs {
			if err := visit(mods[r]); err != nil {
				return err
			}
		}
		state[m.path] = 2
		order = append(order, m)
		return nil
	}
	all := make([]*module, 0, len(mods))
	for _, m := range mods {
		all = append(all, m)
	}
	slices.SortFunc(all, func(a, b *module) int { return cmp.Compare(a.path, b.path) })
	for _, m := range all {
		if err := visit(m); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// gitFiles returns the files git tracks in repo, relative to it.
func gitFiles(repo string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = repo
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w (modproxy publishes the files git tracks: run it in a checkout)", err)
	}
	return strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00"), nil
}

// files returns the tracked files of m, relative to its directory: those
// under its directory and not under another module's.
func files(m *module, mods map[string]*module, tracked []string) []string {
	prefix := m.dir + "/"
	if m.dir == "." {
		prefix = ""
	}
	var nested []string
	for _, o := range mods {
		if o != m && strings.HasPrefix(o.dir+"/", prefix) && o.dir != "." {
			nested = append(nested, o.dir+"/")
		}
	}
	// Directories holding a go.mod git tracks are modules too, published
	// or not (examples, e2e, benchmarks).
	for _, f := range tracked {
		if path.Base(f) == "go.mod" && path.Dir(f) != m.dir && strings.HasPrefix(f, prefix) {
			nested = append(nested, path.Dir(f)+"/")
		}
	}
	var out []string
	for _, f := range tracked {
		if !strings.HasPrefix(f, prefix) || slices.ContainsFunc(nested, func(n string) bool { return strings.HasPrefix(f, n) }) {
			continue
		}
		out = append(out, strings.TrimPrefix(f, prefix))
	}
	return out
}

// release writes m at version into the module proxy out, staging it in a
// directory under work.
func release(repo, out, work, version string, m *module, mods map[string]*module, tracked []string) error {
	stage := filepath.Join(work, strings.ReplaceAll(m.path, "/", "_"))
	names := files(m, mods, tracked)
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(repo, m.dir, name))
		if err != nil {
			return err
		}
		if name == "go.mod" {
			data = releasedGoMod(data, version)
		}
		dst := filepath.Join(stage, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	if !slices.Contains(names, "go.sum") {
		names = append(names, "go.sum")
	}
	// go mod tidy writes the go.sum the release needs: the ctxfit modules
	// at version come from out, written before (their requirers come
	// after them).
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = stage
	tidy.Env = append(os.Environ(), "GOWORK=off", "GONOSUMDB="+root,
		"GOPROXY=file://"+filepath.ToSlash(out)+","+goproxy())
	tidy.Stderr = os.Stderr
	if err := tidy.Run(); err != nil {
		return fmt.Errorf("go mod tidy of the released module: %w", err)
	}
	gomod, err := os.ReadFile(filepath.Join(stage, "go.mod"))
	if err != nil {
		return err
	}
	dir := filepath.Join(out, filepath.FromSlash(m.path), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeZip(filepath.Join(dir, version+".zip"), stage, m.path+"@"+version, names); err != nil {
		return err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err := os.WriteFile(filepath.Join(dir, version+".info"), info, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, version+".mod"), gomod, 0o644); err != nil {
		return err
	}
	return addToList(filepath.Join(dir, "list"), version)
}

// goproxy returns the GOPROXY the go command has, for what is not ctxfit's.
func goproxy() string {
	raw, err := exec.Command("go", "env", "GOPROXY").Output()
	if err != nil || len(bytes.TrimSpace(raw)) == 0 {
		return "https://proxy.golang.org,direct"
	}
	return string(bytes.TrimSpace(raw))
}

// releasedGoMod returns gomod as a release has it: without replace
// directives, every ctxfit module required at version.
func releasedGoMod(gomod []byte, version string) []byte {
	gomod = withoutReplaces(gomod)
	gomod = requireLine.ReplaceAll(gomod, []byte("${1}${2} "+version))
	return append(bytes.TrimRight(gomod, "\n"), '\n')
}

// writeZip writes the module zip of names, files under stage, each at
// prefix/name, as the go command reads one.
func writeZip(file, stage, prefix string, names []string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	slices.Sort(names)
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(stage, filepath.FromSlash(name)))
		if errors.Is(err, os.ErrNotExist) && name == "go.sum" {
			continue // a module without dependencies has no go.sum
		} else if err != nil {
			return errors.Join(err, f.Close())
		}
		w, err := zw.Create(prefix + "/" + name)
		if err != nil {
			return errors.Join(err, f.Close())
		}
		if _, err := w.Write(data); err != nil {
			return errors.Join(err, f.Close())
		}
	}
	if err := zw.Close(); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}

// addToList adds version to the version list file, once.
func addToList(file, version string) error {
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	lines := strings.Fields(string(old))
	if !slices.Contains(lines, version) {
		lines = append(lines, version)
	}
	return os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}
