package gateway

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
)

var validName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// FuzzToolName checks that any operationId, method and path give a valid
// MCP tool name, and that uniqueName keeps it valid and unused.
func FuzzToolName(f *testing.F) {
	for _, s := range []string{"listBookings", "list orders/v2", "", "___", "ä", "ctxfit_next", "a.b-c_d"} {
		f.Add(s, "GET", "/items/{id}")
	}
	f.Fuzz(func(t *testing.T, id, method, p string) {
		name := toolName(id, method, p)
		assert.Regexp(t, validName, name, "from (%q, %q, %q)", id, method, p)
		taken := map[string]bool{name: true}
		again := uniqueName(name, taken)
		assert.Regexp(t, validName, again)
		assert.NotEqual(t, name, again)
	})
}
