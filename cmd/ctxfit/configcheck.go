package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/config"
)

const configUsage = `Usage: ctxfit config check [FILE]

Validates the settings file FILE (default: $CTXFIT_CONFIG; none: the
defaults) together with the CTXFIT_* environment variables, as the proxy
and the examples load them, and prints the effective settings with where
each came from; secrets (CTXFIT_SECRET, previous secrets, the password in
CTXFIT_REDIS_URL) are redacted. Warns on standard error about a secret
written in the file (it belongs in the environment). Exits 1, listing
every error, when the settings are invalid.
`

// runConfig is `ctxfit config SUBCOMMAND`.
func runConfig(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "check" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(stdout, configUsage)
			return nil
		}
		return usageError{errors.New("want a subcommand: ctxfit config check [FILE]")}
	}
	fs := newFlagSet("config check", stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), configUsage) }
	if err := fs.Parse(args[1:]); err != nil {
		return usageErrorOf(err)
	}
	if fs.NArg() > 1 {
		return usageError{fmt.Errorf("takes at most one file, got %d arguments", fs.NArg())}
	}
	ch := config.Inspect(fs.Arg(0), os.Getenv)
	for _, w := range ch.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	return checkConfig(ch, stdout)
}

// checkConfig prints the effective settings of ch and returns an error that
// lists every problem it found.
func checkConfig(ch config.Check, stdout io.Writer) error {
	var b strings.Builder
	from := "the defaults"
	if ch.File != "" {
		from = ch.File
	}
	settings := ch.Settings()
	if settings != nil {
		fmt.Fprintf(&b, "# Effective settings: %s, then the CTXFIT_* variables (secrets redacted).\n", from)
	}
	for _, s := range settings {
		line := s.Key + ": " + s.Value
		comment := s.Source
		if s.Default != "" {
			comment += ": " + s.Default
		}
		fmt.Fprintf(&b, "%-44s # %s\n", line, comment)
	}
	red := config.Redacted(ch.Config)
	rest := struct {
		Params    any `yaml:"params,omitempty"`
		Endpoints any `yaml:"endpoints,omitempty"`
	}{Endpoints: red.Endpoints}
	if red.Params != (ctxfit.Params{}) {
		rest.Params = red.Params
	}
	if settings != nil && (rest.Params != nil || len(red.Endpoints) > 0) {
		var y bytes.Buffer
		enc := yaml.NewEncoder(&y)
		enc.SetIndent(2)
		if err := enc.Encode(rest); err != nil {
			return err
		}
		b.Write(y.Bytes())
	}
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return err
	}
	if len(ch.Errors) == 0 {
		_, err := fmt.Fprintln(stdout, "# The settings are valid.")
		return err
	}
	msgs := make([]string, len(ch.Errors))
	for i, err := range ch.Errors {
		msgs[i] = "  - " + strings.ReplaceAll(err.Error(), "\n", "\n    ")
	}
	noun := "errors"
	if len(msgs) == 1 {
		noun = "error"
	}
	return fmt.Errorf("the settings are invalid, %d %s:\n%s", len(msgs), noun, strings.Join(msgs, "\n"))
}
