package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMCPConfigPrintsEachClientsEntry(t *testing.T) {
	args := []string{"--threshold", "3000", "--env", "CTXFIT_SECRET=s3cret-of-32-bytes-or-more-0123456789", "--name", "bookings", "--ctxfit", "/usr/local/bin/ctxfit",
		"--", "python", "/srv/server.py"}
	proxyArgs := `["proxy","--threshold","3000","--","python","/srv/server.py"]`
	tests := []struct {
		client, want, where string
	}{
		{"claude-desktop", `{"mcpServers":{"bookings":{"command":"/usr/local/bin/ctxfit","args":` + proxyArgs + `,"env":{"CTXFIT_SECRET":"s3cret-of-32-bytes-or-more-0123456789"}}}}`,
			filepath.Join("Claude", "claude_desktop_config.json")},
		{"claude-code", `{"mcpServers":{"bookings":{"type":"stdio","command":"/usr/local/bin/ctxfit","args":` + proxyArgs + `,"env":{"CTXFIT_SECRET":"s3cret-of-32-bytes-or-more-0123456789"}}}}`,
			".mcp.json"},
		{"cursor", `{"mcpServers":{"bookings":{"command":"/usr/local/bin/ctxfit","args":` + proxyArgs + `,"env":{"CTXFIT_SECRET":"s3cret-of-32-bytes-or-more-0123456789"}}}}`,
			filepath.Join(".cursor", "mcp.json")},
		{"vscode", `{"servers":{"bookings":{"type":"stdio","command":"/usr/local/bin/ctxfit","args":` + proxyArgs + `,"env":{"CTXFIT_SECRET":"s3cret-of-32-bytes-or-more-0123456789"}}}}`,
			filepath.Join(".vscode", "mcp.json")},
		{"gemini", `{"mcpServers":{"bookings":{"command":"/usr/local/bin/ctxfit","args":` + proxyArgs + `,"env":{"CTXFIT_SECRET":"s3cret-of-32-bytes-or-more-0123456789"}}}}`,
			filepath.Join(".gemini", "settings.json")},
		{"generic", `{"mcpServers":{"bookings":{"command":"/usr/local/bin/ctxfit","args":` + proxyArgs + `,"env":{"CTXFIT_SECRET":"s3cret-of-32-bytes-or-more-0123456789"}}}}`,
			"mcp.json"},
	}
	for _, tt := range tests {
		t.Run(tt.client+" gets its own keys, and where the entry goes", func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append([]string{"mcp-config", "--client", tt.client}, args...)...)
			require.Equal(t, 0, code, errOut)
			assert.JSONEq(t, tt.want, out)
			assert.Contains(t, out, "\n  \"", "indented for people")
			assert.Contains(t, errOut, tt.where)
		})
	}
}

func TestMCPConfigPrintsTheClaudeMcpAddLine(t *testing.T) {
	secret := "a b " + strings.Repeat("x", 32)
	code, _, errOut := runCLI(t, "", "mcp-config", "--client", "claude-code", "--name", "fs", "--ctxfit", "ctxfit",
		"--env", "CTXFIT_SECRET="+secret, "--env", "CTXFIT_THRESHOLD=3000", "--hard-cap", "9000",
		"--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "claude mcp add fs --scope project --env 'CTXFIT_SECRET="+secret+"' --env CTXFIT_THRESHOLD=3000"+
		" -- ctxfit proxy --hard-cap 9000 -- npx -y @modelcontextprotocol/server-filesystem /tmp\n")

	t.Run("Claude Code's parser reads the name, every variable and the command from it", func(t *testing.T) {
		_, line, ok := strings.Cut(errOut, "  claude mcp add ")
		require.True(t, ok, errOut)
		line, _, _ = strings.Cut(line, "\n")
		got, err := parseClaudeMCPAdd(shellWords(t, line))
		require.NoError(t, err)
		assert.Equal(t, claudeMCPAdd{
			name: "fs", scope: "project", env: []string{"CTXFIT_SECRET=" + secret, "CTXFIT_THRESHOLD=3000"},
			command: []string{"ctxfit", "proxy", "--hard-cap", "9000", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"},
		}, got)
	})
	t.Run("the grammar model refuses the line Claude Code refuses", func(t *testing.T) {
		_, err := parseClaudeMCPAdd([]string{"--scope", "project", "--env", "K=V", "fs", "--", "srv"})
		assert.ErrorContains(t, err, "Invalid environment variable format: fs")
	})
}

// claudeMCPAdd is what `claude mcp add` reads from its arguments.
type claudeMCPAdd struct {
	name, scope string
	env         []string
	command     []string
}

// parseClaudeMCPAdd reads the arguments after `claude mcp add` as Claude
// Code's parser (commander) does: -e/--env takes every following argument
// that does not start with "-" (a variadic option), -s/--scope one value,
// the first other argument is the name, and "--" ends the options; each
// variable must be KEY=VALUE, with the error Claude Code prints.
func parseClaudeMCPAdd(args []string) (claudeMCPAdd, error) {
	var out claudeMCPAdd
	var positional []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case a == "-e" || a == "--env":
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				out.env = append(out.env, args[i])
			}
		case a == "-s" || a == "--scope":
			i++
			out.scope = args[i]
		case strings.HasPrefix(a, "-"):
			return out, fmt.Errorf("unknown option %s", a)
		default:
			positional = append(positional, a)
		}
	}
	for _, e := range out.env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return out, fmt.Errorf("Invalid environment variable format: %s, environment variables should be added as: -e KEY1=value1 -e KEY2=value2", e)
		}
	}
	if len(positional) < 2 {
		return out, errors.New("missing the name or the command")
	}
	out.name, out.command = positional[0], positional[1:]
	return out, nil
}

// shellWords splits a line the way a POSIX shell does for the quoting
// shellQuote writes (single quotes, a quote in them closed, escaped and reopened).
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	in, started := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case in && c == '\'':
			in = false
		case in:
			w.WriteByte(c)
		case c == '\'':
			in, started = true, true
		case c == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			started = true
		case c == ' ':
			if started {
				words = append(words, w.String())
				w.Reset()
				started = false
			}
		default:
			w.WriteByte(c)
			started = true
		}
	}
	require.False(t, in, "unterminated quote in %q", line)
	if started {
		words = append(words, w.String())
	}
	return words
}

func TestMCPConfigChecksTheProxysVariablesBeforeWriting(t *testing.T) {
	tests := []struct {
		name, env, want string
	}{
		{"a secret shorter than 32 bytes", "CTXFIT_SECRET=abc", "secret must be at least 32 bytes"},
		{"a previous secret shorter than 32 bytes", "CTXFIT_PREVIOUS_SECRETS=short", "at least 32"},
		{"a threshold that is not a number", "CTXFIT_THRESHOLD=lots", "CTXFIT_THRESHOLD"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused, and the file is left alone", func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "mcp.json")
			code, out, errOut := runCLI(t, "", "mcp-config", "--client", "generic", "--write", "--file", file, "--env", tt.env, "--", "srv")
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tt.want)
			assert.Contains(t, errOut, "CTXFIT_SECRET=generate", "the error says what to do next")
			assert.NotContains(t, errOut, "abc", "a secret's value is never printed")
			assert.NoFileExists(t, file)
		})
	}
}

func TestMCPConfigGeneratesASecret(t *testing.T) {
	code, out, errOut := runCLI(t, "", "mcp-config", "--client", "generic", "--env", "CTXFIT_SECRET=generate", "--", "srv")
	require.Equal(t, 0, code, errOut)
	var doc struct {
		MCPServers map[string]serverEntry `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	secret := doc.MCPServers["ctxfit"].Env["CTXFIT_SECRET"]
	assert.GreaterOrEqual(t, len(secret), 32)
	assert.NotEqual(t, "generate", secret)

	_, again, _ := runCLI(t, "", "mcp-config", "--client", "generic", "--env", "CTXFIT_SECRET=generate", "--", "srv")
	assert.NotContains(t, again, secret, "each run makes a new secret")
}

func TestMCPConfigHelpListsOnlyFlagsItAccepts(t *testing.T) {
	_, _, errOut := runCLI(t, "", "mcp-config", "-h")
	assert.NotContains(t, errOut, "\n  -listen")
	assert.Contains(t, errOut, "\n  -threshold")
	assert.Contains(t, errOut, "gemini")
}

func TestMCPConfigWritesAConfigPathThatClientsFindFromAnyDirectory(t *testing.T) {
	code, out, errOut := runCLI(t, "", "mcp-config", "--client", "cursor", "--ctxfit", "ctxfit", "--config", "ctxfit.yaml", "--", "srv")
	require.Equal(t, 0, code, errOut)
	abs, err := filepath.Abs("ctxfit.yaml")
	require.NoError(t, err)
	var doc struct {
		MCPServers map[string]serverEntry `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, []string{"proxy", "--config", abs, "--", "srv"}, doc.MCPServers["ctxfit"].Args)
}

// existing is a client file with another server and another key, in an
// order that is not alphabetical.
func existing(serversKey string) string {
	return `{
  "zeta": {"keep": [1, 2, 3]},
  "` + serversKey + `": {
    "other": {"command": "node", "args": ["other.js"], "env": {"TOKEN": "x<y&z"}}
  },
  "alpha": true
}
`
}

func TestMCPConfigWriteMergesIntoEachClientsFile(t *testing.T) {
	tests := []struct{ client, serversKey, file string }{
		{"claude-desktop", "mcpServers", "claude_desktop_config.json"},
		{"claude-code", "mcpServers", ".mcp.json"},
		{"cursor", "mcpServers", filepath.Join(".cursor", "mcp.json")},
		{"vscode", "servers", filepath.Join(".vscode", "mcp.json")},
	}
	for _, tt := range tests {
		t.Run(tt.client+" keeps the other servers and keys, and a backup", func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.file)
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			old := existing(tt.serversKey)
			require.NoError(t, os.WriteFile(path, []byte(old), 0o600))

			code, out, errOut := runCLI(t, "", "mcp-config", "--client", tt.client, "--write", "--file", path,
				"--name", "bookings", "--ctxfit", "ctxfit", "--", "python", "/srv/server.py")
			require.Equal(t, 0, code, errOut)
			assert.Empty(t, out)
			assert.Contains(t, errOut, `Added the server "bookings" in `+path)

			backup, err := os.ReadFile(path + ".bak")
			require.NoError(t, err)
			assert.Equal(t, old, string(backup), "the backup is the old file, byte for byte")

			got, err := os.ReadFile(path)
			require.NoError(t, err)
			var doc map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(got, &doc))
			assert.JSONEq(t, `{"keep":[1,2,3]}`, string(doc["zeta"]))
			assert.JSONEq(t, `true`, string(doc["alpha"]))
			var servers map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(doc[tt.serversKey], &servers))
			assert.JSONEq(t, `{"command":"node","args":["other.js"],"env":{"TOKEN":"x<y&z"}}`, string(servers["other"]))
			var entry serverEntry
			require.NoError(t, json.Unmarshal(servers["bookings"], &entry))
			assert.Equal(t, []string{"proxy", "--", "python", "/srv/server.py"}, entry.Args)
			assert.Equal(t, "ctxfit", entry.Command)
			assert.Equal(t, mcpClients[tt.client].typed, entry.Type == "stdio")

			assert.Less(t, strings.Index(string(got), `"zeta"`), strings.Index(string(got), `"`+tt.serversKey+`"`), "keys keep their order")
			assert.Less(t, strings.Index(string(got), `"other"`), strings.Index(string(got), `"bookings"`), "the new server comes after the others")
			assert.Contains(t, string(got), `"x<y&z"`, "strings are not HTML-escaped")
			st, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the file keeps its mode")

			code, _, errOut = runCLI(t, "", "mcp-config", "--client", tt.client, "--write", "--file", path,
				"--name", "bookings", "--ctxfit", "ctxfit", "--threshold", "2000", "--", "python", "/srv/server.py")
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, errOut, `Replaced the server "bookings"`)
			second, err := os.ReadFile(path + ".bak.1")
			require.NoError(t, err)
			assert.Equal(t, string(got), string(second), "a second write keeps the first backup and adds another")
		})
	}
}

func TestMCPConfigWriteCreatesAMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".vscode", "mcp.json")
	code, _, errOut := runCLI(t, "", "mcp-config", "--client", "vscode", "--write", "--file", path, "--ctxfit", "ctxfit", "--", "srv")
	require.Equal(t, 0, code, errOut)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.JSONEq(t, `{"servers":{"ctxfit":{"type":"stdio","command":"ctxfit","args":["proxy","--","srv"]}}}`, string(got))
	_, err = os.Stat(path + ".bak")
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing to back up")
}

func TestMCPConfigWriteLeavesAFileItCannotReadAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	jsonc := "{\n  // a comment, as VS Code allows\n  \"servers\": {}\n}\n"
	require.NoError(t, os.WriteFile(path, []byte(jsonc), 0o644))
	code, _, errOut := runCLI(t, "", "mcp-config", "--client", "vscode", "--write", "--file", path, "--", "srv")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "add the entry by hand")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, jsonc, string(got))
	_, err = os.Stat(path + ".bak")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestMCPConfigRefusesBadInvocations(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an unknown client", []string{"--client", "emacs", "--", "srv"}, `--client "emacs": want one of claude-code, claude-desktop, cursor, gemini, generic, vscode`},
		{"no client", []string{"--", "srv"}, `--client ""`},
		{"no upstream command", []string{"--client", "cursor"}, "needs the upstream's command"},
		{"--listen, which clients cannot use", []string{"--client", "cursor", "--listen", "127.0.0.1:7070", "--", "srv"}, "over stdio"},
		{"--file without --write", []string{"--client", "cursor", "--file", "x.json", "--", "srv"}, "--file goes with --write"},
		{"an invalid proxy setting", []string{"--client", "cursor", "--mode", "bogus", "--", "srv"}, "mode"},
		{"an --env without a value", []string{"--client", "cursor", "--env", "CTXFIT_SECRET", "--", "srv"}, "want KEY=VALUE"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is a usage error", func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append([]string{"mcp-config"}, tt.args...)...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tt.want)
		})
	}
}

func TestMCPClientsDefaultFiles(t *testing.T) {
	dir := filepath.Join("home", "u", ".config")
	assert.Equal(t, filepath.Join(dir, "Claude", "claude_desktop_config.json"), mcpClients["claude-desktop"].file(dir))
	assert.Equal(t, ".mcp.json", mcpClients["claude-code"].file(dir))
	assert.Equal(t, filepath.Join(".cursor", "mcp.json"), mcpClients["cursor"].file(dir))
	assert.Equal(t, filepath.Join(".vscode", "mcp.json"), mcpClients["vscode"].file(dir))
}

func TestMCPConfigTakesAnUpstreamURLWithEachHeaderAsGiven(t *testing.T) {
	code, out, errOut := runCLI(t, "", "mcp-config", "--client", "cursor", "--name", "remote", "--ctxfit", "ctxfit",
		"--upstream-url", "https://mcp.example.com/mcp", "--header", "Authorization:Bearer t", "--header", "X-Team:a")
	require.Equal(t, 0, code, errOut)
	assert.JSONEq(t, `{"mcpServers":{"remote":{"command":"ctxfit","args":["proxy","--header","Authorization:Bearer t",`+
		`"--header","X-Team:a","--upstream-url","https://mcp.example.com/mcp"]}}}`, out)
}
