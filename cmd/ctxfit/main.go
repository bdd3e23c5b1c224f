// Command ctxfit is ctxfit's command-line tool.
//
// Usage:
//
//	ctxfit demo                 show paging, cursors and their errors on generated data
//	ctxfit count [FLAGS] [FILE] print the exact token count of FILE or standard input
//	ctxfit shape [FLAGS] [FILE] print what the guard would return for a response
//	ctxfit proxy [FLAGS] -- COMMAND [ARGS...]
//	                            put the guard in front of a stdio MCP server
//	ctxfit gateway --openapi FILE_OR_URL [FLAGS]
//	                            serve an OpenAPI-described HTTP API as guarded MCP tools
//	ctxfit tools [FLAGS] -- COMMAND [ARGS...]
//	                            list an MCP server's tools behind the guard
//	ctxfit call [FLAGS] TOOL -- COMMAND [ARGS...]
//	                            call a tool behind the guard and print the shaped result
//	ctxfit mcp-config --client CLIENT [FLAGS] -- COMMAND [ARGS...]
//	                            print (or --write) an MCP client's entry for the proxy
//	ctxfit config check [FILE]  validate the settings and print them, secrets redacted
//	ctxfit version              print the version and VCS revision
//
// Run "ctxfit help" or "ctxfit COMMAND -h" for the flags of each command.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `ctxfit keeps responses for LLMs inside a token budget, losing nothing.

Usage:
  ctxfit demo                                          show paging, cursors and their errors on generated data
  ctxfit count [--encoding o200k_base|cl100k_base] [FILE]  print the exact token count of FILE (or standard input)
  ctxfit shape [--threshold N] [--hard-cap N] [--encoding E] [--content-type T] [FILE]
                                                       print what the guard would return for a JSON or text response
  ctxfit proxy [FLAGS] -- COMMAND [ARGS...]            put the guard in front of the stdio MCP server COMMAND runs
                                                       (stdio, or streamable HTTP with --listen 127.0.0.1:PORT)
  ctxfit gateway --openapi FILE_OR_URL [--base-url URL] [--include OPS] [--header NAME:VALUE]... [--listen ADDR]
                                                       serve an OpenAPI-described HTTP API as guarded MCP tools
  ctxfit tools [PROXY FLAGS] -- COMMAND [ARGS...]      list the tools of an MCP server behind the guard, with the
                                                       tokens of each definition
  ctxfit call [--args JSON] [--next N] [PROXY FLAGS] TOOL -- COMMAND [ARGS...]
                                                       call a tool behind the guard: the result as a model gets it,
                                                       its tokens before and after, and its pages with --next
  ctxfit mcp-config --client claude-desktop|claude-code|cursor|vscode|gemini|generic [--name NAME] [--write [--file PATH]]
                    [PROXY FLAGS] -- COMMAND [ARGS...]
                                                       print the MCP client's configuration entry for ctxfit proxy,
                                                       or merge it into the client's file (keeping a backup)
  ctxfit config check [FILE]                           validate the settings file and CTXFIT_* variables, print
                                                       the effective settings (secrets redacted); exit 1 on errors
  ctxfit version                                       print the module version and VCS revision (also --version)
  ctxfit help                                          show this help
`

// run is main without the process: it returns the exit code (0 ok, 1 failure,
// 2 usage error).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "demo":
		err = runDemo(args[1:], stdout)
	case "count":
		err = runCount(args[1:], stdin, stdout)
	case "shape":
		err = runShape(args[1:], stdin, stdout, stderr)
	case "proxy":
		err = runProxy(args[1:], stdin, stdout, stderr)
	case "gateway":
		err = runGateway(args[1:], stdin, stdout, stderr)
	case "mcp-config":
		err = runMCPConfig(args[1:], stdout, stderr)
	case "tools", "call":
		err = runTry(args[0], args[1:], stdout, stderr)
	case "config":
		err = runConfig(args[1:], stdout, stderr)
	case "version", "-version", "--version":
		err = runVersion(args[1:], stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "ctxfit: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "ctxfit %s: %v\n", args[0], err)
		return 2
	default:
		fmt.Fprintf(stderr, "ctxfit %s: %v\n", args[0], err)
		return 1
	}
}

// usageError marks errors in the command line itself.
type usageError struct{ error }

func newFlagSet(name string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ctxfit "+name, flag.ContinueOnError)
	fs.SetOutput(out)
	return fs
}
