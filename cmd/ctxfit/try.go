package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/buildinfo"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

const toolsUsage = `Usage: ctxfit tools [PROXY FLAGS] -- COMMAND [ARGS...]
       ctxfit tools [PROXY FLAGS] --upstream-url URL

Starts the MCP server COMMAND (or connects to URL) behind ctxfit proxy, as
a client would see it, and lists its tools: name, the exact tokens of the
tool's definition (what tools/list costs a model), and the first line of
its description; ctxfit's own tools (ctxfit_next, ...) are listed too. The
last line is the whole catalog's tokens.

PROXY FLAGS are those of "ctxfit proxy" except --listen.

Flags:
`

const callUsage = `Usage: ctxfit call [--args JSON] [--next N] [--json] [PROXY FLAGS] TOOL -- COMMAND [ARGS...]
       ctxfit call [--args JSON] [--next N] [--json] [PROXY FLAGS] TOOL --upstream-url URL

Starts the MCP server COMMAND (or connects to URL) behind ctxfit proxy and
calls TOOL with the arguments --args (a JSON object): prints the result as
a model receives it (each text block's text, other blocks as JSON lines),
and on standard error its tokens before and after shaping and the
strategy. --next N then follows the result's next cursor (ctxfit_next) up
to N times (-1: to the end), printing each page; cursors live in this
process, so follow them here. --json prints each result's JSON instead.

PROXY FLAGS are those of "ctxfit proxy" except --listen.

Flags:
`

// tryFlags are the command line of `ctxfit tools` and `ctxfit call`.
type tryFlags struct {
	proxy *proxyFlags
	args  string
	next  int
	json  bool
	tool  string
	// proxyArgs is the proxy's command line: the proxy flags given, then
	// "--" and the server's command.
	proxyArgs []string
}

func parseTryFlags(name string, args []string, out io.Writer) (*tryFlags, error) {
	fs := newFlagSet(name, out)
	t := &tryFlags{proxy: registerProxyFlags(fs)}
	proxyNames := flagNames(fs)
	usage := toolsUsage
	if name == "call" {
		usage = callUsage
		fs.StringVar(&t.args, "args", "{}", "the tool's arguments, a JSON object")
		fs.IntVar(&t.next, "next", 0, "follow the next cursor up to N times after the first result (-1: to the end)")
		fs.BoolVar(&t.json, "json", false, "print each result's JSON instead of its content")
	}
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		printDefaultsExcept(fs, "listen")
	}
	if err := fs.Parse(args); err != nil {
		return nil, usageErrorOf(err)
	}
	rest := fs.Args()
	if name == "call" {
		// The tool's name stands before "--" and the server's command,
		// and flags may follow it.
		ended := len(rest) < len(args) && args[len(args)-len(rest)-1] == "--"
		if len(rest) == 0 || ended {
			return nil, usageError{errors.New("needs the tool's name: " + strings.SplitN(callUsage, "\n", 2)[0][len("Usage: "):])}
		}
		t.tool = rest[0]
		if err := fs.Parse(rest[1:]); err != nil {
			return nil, usageErrorOf(err)
		}
		rest = fs.Args()
		var obj map[string]any
		if err := json.Unmarshal([]byte(t.args), &obj); err != nil || obj == nil {
			return nil, usageError{fmt.Errorf(`--args %q: want a JSON object, e.g. --args '{"query": "x"}'`, clip(t.args))}
		}
	}
	t.proxy.command = rest
	if err := t.proxy.check("ctxfit " + name + " [FLAGS] -- COMMAND [ARGS...]"); err != nil {
		return nil, err
	}
	if t.proxy.listen != "" {
		return nil, usageError{errors.New("--listen: ctxfit " + name + " runs the proxy itself; leave it out")}
	}
	t.proxyArgs = append(givenProxyArgs(fs, t.proxy, proxyNames), "--")
	t.proxyArgs = append(t.proxyArgs, rest...)
	return t, nil
}

// clip cuts s to about 80 bytes for a message or a table cell.
func clip(s string) string {
	if len(s) > 80 {
		return strings.ToValidUTF8(s[:77], "") + "..."
	}
	return s
}

// tailLog keeps the last logTail bytes written to it; it is safe for
// concurrent use (the proxy and the upstream's standard error write it).
type tailLog struct {
	mu  sync.Mutex
	buf []byte
}

const logTail = 4000

func (l *tailLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if over := len(l.buf) - 2*logTail; over > 0 {
		l.buf = append(l.buf[:0], l.buf[len(l.buf)-logTail:]...)
	}
	return len(p), nil
}

func (l *tailLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > logTail {
		return "..." + strings.ToValidUTF8(string(l.buf[len(l.buf)-logTail:]), "")
	}
	return string(l.buf)
}

// connectProxy runs `ctxfit proxy` with the flags in this process, over
// pipes, and connects a client to it. The proxy's log (and the upstream's
// standard error) is kept in log; close ends both.
func connectProxy(ctx context.Context, proxyArgs []string, log io.Writer) (cs *mcp.ClientSession, close func() error, err error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		err := serveProxy(ctx, proxyArgs, inR, outW, log, os.Getenv)
		outW.CloseWithError(io.EOF)
		done <- err
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "ctxfit", Version: buildinfo.Read().Short()}, nil)
	cs, err = client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		cancel()
		_ = inW.Close()
		if perr := <-done; perr != nil {
			return nil, nil, perr
		}
		return nil, nil, fmt.Errorf("connecting to the server: %w", err)
	}
	return cs, func() error {
		cerr := cs.Close()
		cancel()
		_ = inW.Close()
		perr := <-done
		if errors.Is(perr, context.Canceled) {
			perr = nil
		}
		return errors.Join(perr, ignoreClosed(cerr))
	}, nil
}

// ignoreClosed drops the error of closing a session whose pipes are
// already gone.
func ignoreClosed(err error) error {
	if err == nil || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// runTry is `ctxfit tools` (name "tools") and `ctxfit call` (name "call").
func runTry(name string, args []string, stdout, stderr io.Writer) error {
	t, err := parseTryFlags(name, args, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := &tailLog{}
	cs, closeProxy, err := connectProxy(ctx, t.proxyArgs, log)
	if err != nil {
		return withLog(err, log)
	}
	if name == "tools" {
		err = listTools(ctx, cs, stdout, t.proxy)
	} else {
		err = callTool(ctx, cs, t, stdout, stderr)
	}
	return withLog(errors.Join(err, closeProxy()), log)
}

// withLog adds the proxy's log to err, where the reason often is (the
// server's own message when it would not start).
func withLog(err error, log *tailLog) error {
	if err == nil {
		return nil
	}
	if l := strings.TrimSpace(log.String()); l != "" {
		return fmt.Errorf("%w\nthe proxy's log:\n%s", err, l)
	}
	return err
}

func listTools(ctx context.Context, cs *mcp.ClientSession, w io.Writer, f *proxyFlags) error {
	counter, err := budget.Exact(f.encoding)
	if err != nil {
		return usageError{err}
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tTOKENS\tDESCRIPTION")
	for _, tool := range res.Tools {
		def, _ := json.Marshal(tool)
		n := counter.Count(string(def))
		desc, _, _ := strings.Cut(strings.TrimSpace(tool.Description), "\n")
		fmt.Fprintf(tw, "%s\t%d\t%s\n", tool.Name, n, clip(desc))
	}
	all, _ := json.Marshal(res)
	fmt.Fprintf(tw, "(%d tools)\t%d\t%s\n", len(res.Tools), counter.Count(string(all)), "the whole tools/list result")
	return tw.Flush()
}

func callTool(ctx context.Context, cs *mcp.ClientSession, t *tryFlags, stdout, stderr io.Writer) error {
	var args map[string]any
	_ = json.Unmarshal([]byte(t.args), &args)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: t.tool, Arguments: args})
	for i := 0; ; i++ {
		if err != nil {
			return fmt.Errorf("tools/call %s: %w", t.tool, err)
		}
		if err := printResult(res, t.json, stdout, stderr); err != nil {
			return err
		}
		next, _ := res.Meta[mcpcore.MetaNextCursor].(string)
		if next == "" || (t.next >= 0 && i >= t.next) {
			if next != "" {
				fmt.Fprintf(stderr, "more: run again with --next %d to follow the next cursor\n", i+1)
			}
			return nil
		}
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpcore.DefaultNextTool, Arguments: map[string]any{"cursor": next}})
	}
}

// printResult prints a tool result's content as a model reads it (or its
// JSON), and its figures on stderr.
func printResult(res *mcp.CallToolResult, asJSON bool, stdout, stderr io.Writer) error {
	if err := printContent(res, asJSON, stdout); err != nil {
		return err
	}
	var figures []string
	if s, ok := res.Meta[mcpcore.MetaStrategy].(string); ok {
		figures = append(figures, "strategy "+s)
	}
	if n, ok := res.Meta[mcpcore.MetaOriginalTokens].(float64); ok {
		figures = append(figures, fmt.Sprintf("%d tokens before", int(n)))
	}
	if n, ok := res.Meta[mcpcore.MetaTokens].(float64); ok {
		figures = append(figures, fmt.Sprintf("%d after", int(n)))
	}
	if len(figures) == 0 {
		figures = append(figures, "passed through unshaped")
	}
	if res.IsError {
		figures = append(figures, "isError")
	}
	_, err := fmt.Fprintf(stderr, "-- %s\n", strings.Join(figures, ", "))
	return err
}

// printContent prints a result's JSON, or its content: each text block's
// text, other blocks as JSON lines.
func printContent(res *mcp.CallToolResult, asJSON bool, w io.Writer) error {
	if asJSON {
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			fmt.Fprintln(w, tc.Text)
			continue
		}
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\n", b)
	}
	return nil
}
