package hostile

import (
	"fmt"
	"strings"
)

// HardCap is the hard cap (threshold 1,000) the hostile results and
// edges are tested under.
const HardCap = 2000

// The hostile edges besides tools, which every SDK's hostile test server
// serves: a host UI resource (an MCP App page, which passes unchanged and
// uncounted), a huge resource and a huge prompt (each some 30,000
// tokens).
const (
	UIURI      = "ui://hostile/mcp-app.html"
	UIMIME     = "text/html;profile=mcp-app"
	HugeURI    = "file:///hostile/huge.txt"
	HugePrompt = "huge_prompt"
)

// UIPage is the host UI resource's page: far over any budget.
func UIPage() string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><body>")
	for i := range 3000 {
		fmt.Fprintf(&b, "<div class=\"page\" id=\"p%d\">page %d &amp; its viewer</div>\n", i, i)
	}
	b.WriteString("</body></html>")
	return b.String()
}

// HugeText is the text of the huge resource and prompt.
func HugeText() string {
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "line %d: the guest booked a room with a view \"of the harbour\"\n", i)
	}
	return b.String()
}
