package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ctxfit/ctxfit/config"
	"github.com/ctxfit/ctxfit/config/settings"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/internal/jsonwire"
)

const mcpConfigUsage = `Usage: ctxfit mcp-config --client CLIENT [--name NAME] [--env KEY=VALUE]...
                         [--write [--file PATH]] [PROXY FLAGS] -- COMMAND [ARGS...]

Prints the entry that makes an MCP client start COMMAND behind ctxfit proxy
(the JSON on standard output, where it goes on standard error), or with
--write merges it into the client's file: other entries and keys stay as
they are, an entry of the same name is replaced, and the old file is kept
beside it as FILE.bak (FILE.bak.1, ... when that exists).

Clients and their files (--file overrides; relative paths are in the
current directory):
  claude-desktop  claude_desktop_config.json in the user's configuration
                  directory ("mcpServers")
  claude-code     .mcp.json, the project scope ("mcpServers", type stdio);
                  also prints the equivalent "claude mcp add" command
  cursor          .cursor/mcp.json ("mcpServers"); ~/.cursor/mcp.json for
                  every project
  vscode          .vscode/mcp.json ("servers", type stdio)
  gemini          .gemini/settings.json, the project's settings of Gemini
                  CLI ("mcpServers"); ~/.gemini/settings.json for the user
  generic         mcp.json ("mcpServers"), the form most other clients read

--env CTXFIT_SECRET=generate puts a new random secret of 32 bytes in the
entry. Every CTXFIT_* variable given with --env is checked as the proxy
will check it (a secret needs at least 32 bytes) before anything is
printed or written.

PROXY FLAGS are those of "ctxfit proxy" (see ctxfit proxy -h) except
--listen: clients start the proxy over stdio.

Flags:
`

// mcpClient is an MCP client whose configuration file mcp-config knows.
type mcpClient struct {
	// serversKey is the top-level key holding the servers by name.
	serversKey string
	// typed clients want "type": "stdio" in each entry.
	typed bool
	// file is the default configuration file; configDir is the user's
	// configuration directory (os.UserConfigDir).
	file func(configDir string) string
}

var mcpClients = map[string]mcpClient{
	"claude-desktop": {serversKey: "mcpServers", file: func(dir string) string {
		return filepath.Join(dir, "Claude", "claude_desktop_config.json")
	}},
	"claude-code": {serversKey: "mcpServers", typed: true, file: func(string) string { return ".mcp.json" }},
	"cursor":      {serversKey: "mcpServers", file: func(string) string { return filepath.Join(".cursor", "mcp.json") }},
	"vscode":      {serversKey: "servers", typed: true, file: func(string) string { return filepath.Join(".vscode", "mcp.json") }},
	"gemini":      {serversKey: "mcpServers", file: func(string) string { return filepath.Join(".gemini", "settings.json") }},
	"generic":     {serversKey: "mcpServers", file: func(string) string { return "mcp.json" }},
}

func clientNames() string {
	names := make([]string, 0, len(mcpClients))
	for n := range mcpClients {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// serverEntry is one server in a client's file. Field order and omitempty
// follow the clients' documented examples.
type serverEntry struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

// mcpConfigFlags are the command line of `ctxfit mcp-config`.
type mcpConfigFlags struct {
	client, name, file, ctxfit string
	write                      bool
	env                        map[string]string
	proxy                      *proxyFlags
	proxyArgs                  []string // the proxy flags given, as arguments
}

func parseMCPConfigFlags(args []string, out io.Writer) (*mcpConfigFlags, error) {
	fs := newFlagSet("mcp-config", out)
	m := &mcpConfigFlags{proxy: registerProxyFlags(fs), env: map[string]string{}}
	proxyNames := flagNames(fs)
	fs.StringVar(&m.client, "client", "", "the MCP client: "+clientNames())
	fs.StringVar(&m.name, "name", "ctxfit", "the server's name in the client")
	fs.BoolVar(&m.write, "write", false, "merge the entry into the client's file instead of printing it")
	fs.StringVar(&m.file, "file", "", "the client's file to write (default: the client's own, see above)")
	fs.StringVar(&m.ctxfit, "ctxfit", defaultCtxfitPath(), "the ctxfit binary the client runs")
	fs.Func("env", "an environment variable of the proxy, KEY=VALUE (repeatable), e.g. CTXFIT_SECRET=generate", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("want KEY=VALUE, got %q", redactEnv(s))
		}
		m.env[k] = v
		return nil
	})
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), mcpConfigUsage)
		printDefaultsExcept(fs, "listen")
	}
	if err := fs.Parse(args); err != nil {
		return nil, usageErrorOf(err)
	}
	if _, ok := mcpClients[m.client]; !ok {
		return nil, usageError{fmt.Errorf("--client %q: want one of %s", m.client, clientNames())}
	}
	if strings.TrimSpace(m.name) == "" {
		return nil, usageError{errors.New("--name must not be empty")}
	}
	if m.file != "" && !m.write {
		return nil, usageError{errors.New("--file goes with --write")}
	}
	if err := m.checkEnv(); err != nil {
		return nil, err
	}
	m.proxy.command = fs.Args()
	if err := m.proxy.check("ctxfit mcp-config --client CLIENT [FLAGS] -- COMMAND [ARGS...]"); err != nil {
		return nil, err
	}
	if m.proxy.listen != "" {
		return nil, usageError{errors.New("--listen: MCP clients start the proxy over stdio; run ctxfit proxy --listen yourself and give the client its URL")}
	}
	if m.proxy.configPath != "" {
		abs, err := filepath.Abs(m.proxy.configPath) // clients start servers in a directory of their own
		if err != nil {
			return nil, err
		}
		m.proxy.configPath = abs
	}
	m.proxyArgs = givenProxyArgs(fs, m.proxy, proxyNames)
	return m, nil
}

// flagNames returns the names of the flags defined on fs.
func flagNames(fs *flag.FlagSet) map[string]bool {
	names := map[string]bool{}
	fs.VisitAll(func(fl *flag.Flag) { names[fl.Name] = true })
	return names
}

// givenProxyArgs returns the proxy flags (those in proxyNames) given on fs
// as arguments for "ctxfit proxy", in lexical order so that the output is
// stable; --config is f's path (which the caller may have made absolute).
func givenProxyArgs(fs *flag.FlagSet, f *proxyFlags, proxyNames map[string]bool) []string {
	var args []string
	fs.Visit(func(fl *flag.Flag) {
		if !proxyNames[fl.Name] {
			return
		}
		v := fl.Value.String()
		switch fl.Name {
		case "config":
			v = f.configPath
		case "header", "redact": // repeatable: each as it was given
			for _, h := range f.repeated(fl.Name) {
				args = append(args, "--"+fl.Name, h)
			}
			return
		}
		args = append(args, "--"+fl.Name, v)
	})
	return args
}

// defaultCtxfitPath is the running binary's absolute path, so that clients
// that do not search the shell's PATH (Claude Desktop) find it; "ctxfit"
// when the binary is a temporary one of go run or go test.
func defaultCtxfitPath() string {
	exe, err := os.Executable()
	if err != nil || strings.Contains(exe, "go-build") {
		return "ctxfit"
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	return exe
}

// entry returns the server entry for the client.
func (m *mcpConfigFlags) entry() serverEntry {
	args := append([]string{"proxy"}, m.proxyArgs...)
	if len(m.proxy.command) > 0 { // else --upstream-url names the server
		args = append(append(args, "--"), m.proxy.command...)
	}
	e := serverEntry{Command: m.ctxfit, Args: args}
	if mcpClients[m.client].typed {
		e.Type = "stdio"
	}
	if len(m.env) > 0 {
		e.Env = m.env
	}
	return e
}

// claudeAddLine is the `claude mcp add` command that writes the same entry
// into .mcp.json. The name comes before the options: Claude Code's --env
// takes any number of values, so a name after it would be read as one more
// variable ("Invalid environment variable format: NAME"); "--" ends the
// values before the command.
func (m *mcpConfigFlags) claudeAddLine() string {
	e := m.entry()
	words := []string{"claude", "mcp", "add", m.name, "--scope", "project"}
	keys := make([]string, 0, len(m.env))
	for k := range m.env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		words = append(words, "--env", k+"="+m.env[k])
	}
	words = append(append(words, "--", e.Command), e.Args...)
	for i, w := range words {
		words[i] = shellQuote(w)
	}
	return strings.Join(words, " ")
}

// generateSecret is the value of --env CTXFIT_SECRET=generate (or
// CTXFIT_PREVIOUS_SECRETS=generate): replaced by a new random secret.
const generateSecret = "generate"

// checkEnv replaces generated secrets and checks every CTXFIT_* variable as
// the proxy will read it at start, so that a client is never given an entry
// whose proxy refuses to start.
func (m *mcpConfigFlags) checkEnv() error {
	if m.env["CTXFIT_SECRET"] == generateSecret {
		b := make([]byte, cursor.MinSecretBytes)
		_, _ = rand.Read(b) // never fails (crypto/rand)
		m.env["CTXFIT_SECRET"] = base64.RawURLEncoding.EncodeToString(b)
	}
	if _, err := config.FromEnv(settings.Config{}, func(k string) string { return m.env[k] }); err != nil {
		return usageError{fmt.Errorf("--env: %w; the proxy would refuse to start with it (for a new secret give --env CTXFIT_SECRET=%s)", err, generateSecret)}
	}
	return nil
}

// redactEnv returns an --env argument for an error message: the value of a
// variable whose name looks secret is left out.
func redactEnv(s string) string {
	k, _, ok := strings.Cut(s, "=")
	if ok && strings.Contains(strings.ToUpper(k), "SECRET") {
		return k + "=..."
	}
	return s
}

// printDefaultsExcept prints the flags' defaults as fs.PrintDefaults does,
// without the named ones.
func printDefaultsExcept(fs *flag.FlagSet, names ...string) {
	shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	shown.SetOutput(fs.Output())
	fs.VisitAll(func(fl *flag.Flag) {
		if !slices.Contains(names, fl.Name) {
			shown.Var(fl.Value, fl.Name, fl.Usage)
		}
	})
	shown.PrintDefaults()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,@+%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runMCPConfig is `ctxfit mcp-config`.
func runMCPConfig(args []string, stdout, stderr io.Writer) error {
	m, err := parseMCPConfigFlags(args, stderr)
	if err != nil {
		return err
	}
	c := mcpClients[m.client]
	path := m.file
	if path == "" {
		dir, err := os.UserConfigDir()
		if err != nil && m.client == "claude-desktop" {
			return fmt.Errorf("cannot find the user's configuration directory (%v): give the file with --file", err)
		}
		path = c.file(dir)
	}
	entry, err := jsonwire.MarshalUnescaped(m.entry())
	if err != nil {
		return err
	}
	for _, a := range m.proxy.command[min(1, len(m.proxy.command)):] {
		if !filepath.IsAbs(a) && !strings.HasPrefix(a, "-") && fileExists(a) {
			fmt.Fprintf(stderr, "note: %s is a relative path; the client may start the server in another directory, so give it as an absolute path\n", a)
		}
	}
	if !m.write {
		doc, _, err := mergeServer(nil, c.serversKey, m.name, entry)
		if err != nil {
			return err
		}
		if _, err := stdout.Write(doc); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "Add this to %s (or run again with --write to merge it there).\n", path)
		if m.client == "claude-code" {
			fmt.Fprintf(stderr, "Or let Claude Code write it:\n  %s\n", m.claudeAddLine())
		}
		return nil
	}
	return writeServer(path, c.serversKey, m.name, entry, stderr)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// writeServer merges the entry into the file at path, keeping the old file
// as a backup, and says what it did on w.
func writeServer(path, serversKey, name string, entry json.RawMessage, w io.Writer) error {
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	doc, replaced, err := mergeServer(old, serversKey, name, entry)
	if err != nil {
		return fmt.Errorf("%s: %w; it is left as it was", path, err)
	}
	mode := fs.FileMode(0o644)
	if exists {
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		mode = st.Mode().Perm()
		backup, err := backupFile(path, old, mode)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "Kept the previous %s as %s.\n", path, backup)
	} else if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := writeFileAtomic(path, doc, mode); err != nil {
		return err
	}
	verb := "Added"
	if replaced {
		verb = "Replaced"
	}
	fmt.Fprintf(w, "%s the server %q in %s; restart the client to use it.\n", verb, name, path)
	return nil
}

// backupFile copies data to the first free name of path.bak, path.bak.1, ...
func backupFile(path string, data []byte, mode fs.FileMode) (string, error) {
	for i := 0; ; i++ {
		name := path + ".bak"
		if i > 0 {
			name = fmt.Sprintf("%s.bak.%d", path, i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		return name, errors.Join(err, f.Close())
	}
}

// writeFileAtomic replaces path with data through a temporary file in the
// same directory, so that a client never reads half a file.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	err = errors.Join(err, tmp.Chmod(mode), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// member is one key of a JSON object, in the order of the document.
type member struct {
	key   string
	value json.RawMessage
}

// mergeServer returns doc (a JSON object; empty means {}) with the entry
// set as doc[serversKey][name], indented by two spaces. Other keys and
// servers keep their order and values; replaced reports whether name was
// there.
func mergeServer(doc []byte, serversKey, name string, entry json.RawMessage) (_ []byte, replaced bool, _ error) {
	var top []member
	if len(bytes.TrimSpace(doc)) > 0 {
		var err error
		if top, err = decodeObject(doc); err != nil {
			return nil, false, fmt.Errorf("not a JSON object (%v); add the entry by hand", err)
		}
	}
	i := slices.IndexFunc(top, func(m member) bool { return m.key == serversKey })
	var servers []member
	if i >= 0 {
		var err error
		if servers, err = decodeObject(top[i].value); err != nil {
			return nil, false, fmt.Errorf("%q is not a JSON object (%v)", serversKey, err)
		}
	} else {
		top = append(top, member{key: serversKey})
		i = len(top) - 1
	}
	if j := slices.IndexFunc(servers, func(m member) bool { return m.key == name }); j >= 0 {
		servers[j].value, replaced = entry, true
	} else {
		servers = append(servers, member{key: name, value: entry})
	}
	top[i].value = encodeObject(servers)
	var out bytes.Buffer
	if err := json.Indent(&out, encodeObject(top), "", "  "); err != nil {
		return nil, false, err
	}
	out.WriteByte('\n')
	return out.Bytes(), replaced, nil
}

// decodeObject reads a JSON object's members in order; trailing data is an
// error.
func decodeObject(b []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want an object, got %v", tok)
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		ms = append(ms, member{key: tok.(string), value: v})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the object")
	}
	return ms, nil
}

// encodeObject writes the members as a compact JSON object.
func encodeObject(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := jsonwire.MarshalUnescaped(m.key)
		b.Write(k)
		b.WriteByte(':')
		_ = json.Compact(&b, m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}
