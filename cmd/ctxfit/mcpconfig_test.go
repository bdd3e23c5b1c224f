package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMCPConfigPrintsEachClientsEntry(t *testing.T) {
	args := []string{"--threshold", "3000", "--env", "CTXFIT_SECRET=s3cret", "--name", "bookings", "--ctxfit", "/usr/local/bin/ctxfit",
		"--", "python", "/srv/server.py"}
	proxyArgs := `["proxy","--threshold","3000","--","python","/srv/server.py"]`
	tests := []struct {
		client, want, where string
	}{
		{"claude-desktop", `{"mcpServers":{"bookings":{"command":"/usr/local/bin/ctxfit","args":` + proxyArgs + `,"env":{"CTXFIT_SECRET":"s3cret"}}}}`,
			filepath.Join("Claude", "claude_desktop_config.json")},
		{"claude-code", `{"mcpServers":{"bookings":{"type":"stdio","command":"/usr/local/bin/ctxfit","args":` + proxyArgs + `,"env":{"CTXFIT_SECRET":"s3cret"}}}}`,
			".mcp.json"},
		{"cursor", `{"mcpServers":{"bookings":{"command":"/usr/local/bin/ctxfit","args":` + proxyArgs + `,"env":{"CTXFIT_SECRET":"s3cret"}}}}`,
			filepath.Join(".cursor", "mcp.json")},
		{"vscode", `{"servers":{"bookings":{"type":"stdio","command":"/usr/local/bin/ctxfit","args":` + proxyArgs + `,"env":{"CTXFIT_SECRET":"s3cret"}}}}`,
			filepath.Join(".vscode", "mcp.json")},
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
	code, _, errOut := runCLI(t, "", "mcp-config", "--client", "claude-code", "--name", "fs", "--ctxfit", "ctxfit",
		"--env", "CTXFIT_SECRET=a b", "--hard-cap", "9000", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut,
		"claude mcp add --scope project --env 'CTXFIT_SECRET=a b' fs -- ctxfit proxy --hard-cap 9000 -- npx -y @modelcontextprotocol/server-filesystem /tmp\n")
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
		{"an unknown client", []string{"--client", "emacs", "--", "srv"}, `--client "emacs": want one of claude-code, claude-desktop, cursor, vscode`},
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
