package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/config"
)

const shapeUsage = `Usage: ctxfit shape [FLAGS] [FILE]

Prints what the guard would return for the JSON or text response in FILE
(or standard input when FILE is absent or "-"): the shaped body on standard
output, exactly as a client would get it, and one line on standard error
with the strategy and the tokens before and after. A response under the
threshold is printed unchanged.

Settings come from the defaults, the file of --config (or CTXFIT_CONFIG),
the CTXFIT_* variables, then the flags below.

Flags:
`

// runShape is `ctxfit shape`.
func runShape(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("shape", stderr)
	configPath := fs.String("config", "", "settings file (JSON or YAML); default $CTXFIT_CONFIG")
	threshold := fs.Int("threshold", 0, "token count above which the response is shaped (default 4000)")
	hardCap := fs.Int("hard-cap", 0, "token count no shaped response exceeds (default 12000)")
	encoding := fs.String("encoding", "", "tiktoken encoding: o200k_base or cl100k_base (default o200k_base)")
	contentType := fs.String("content-type", "", "media type of the response, e.g. application/json or text/plain (default: sniffed)")
	endpoint := fs.String("endpoint", "", "the route pattern or tool name whose endpoint settings apply")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), shapeUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageErrorOf(err)
	}
	if fs.NArg() > 1 {
		return usageError{fmt.Errorf("takes at most one FILE, got %d arguments", fs.NArg())}
	}
	cfg, err := config.Load(*configPath, os.Getenv)
	if err != nil {
		return usageError{err}
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "threshold":
			cfg.Threshold = *threshold
		case "hard-cap":
			cfg.HardCap = *hardCap
		case "encoding":
			cfg.Encoding = *encoding
		}
	})
	// Offline, a cursor has nowhere to lead: a random key is fine and
	// its warning is noise.
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return usageError{err}
	}
	defer g.Close()

	var body []byte
	if name := fs.Arg(0); name != "" && name != "-" {
		body, err = os.ReadFile(name)
	} else {
		body, err = io.ReadAll(stdin)
	}
	if err != nil {
		return err
	}
	res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: *endpoint, Path: *endpoint}, func(context.Context) (ctxfit.Response, error) {
		return ctxfit.Response{Body: body, ContentType: *contentType}, nil
	})
	if err != nil {
		return err
	}
	if _, err := stdout.Write(res.Body); err != nil {
		return err
	}
	rec := res.Record
	before := fmt.Sprint(rec.TokensBefore)
	if rec.TokensBeforeEstimated {
		// Past the hard cap the guard counts a prefix and scales it;
		// ctxfit count gives the exact figure.
		before = "about " + before + " (estimated; ctxfit count gives the exact figure)"
	}
	line := fmt.Sprintf("%s: %s -> %d tokens (threshold %d, hard cap %d)",
		res.Strategy, before, rec.TokensAfter, g.Config().Threshold, rec.HardCap)
	if res.Guidance != "" {
		line += ". " + res.Guidance
	}
	_, err = fmt.Fprintln(stderr, line)
	return err
}
