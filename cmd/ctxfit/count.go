package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ctxfit/ctxfit/budget"
)

// runCount prints the exact token count of a file or standard input as a
// bare integer.
func runCount(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := newFlagSet("count", stdout)
	encoding := fs.String("encoding", budget.O200KBase, "tiktoken encoding: o200k_base or cl100k_base")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: ctxfit count [--encoding o200k_base|cl100k_base] [FILE]\n\nPrints the exact token count of FILE, or of standard input when FILE is absent or \"-\".")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageErrorOf(err)
	}
	if fs.NArg() > 1 {
		return usageError{fmt.Errorf("takes at most one FILE, got %d arguments", fs.NArg())}
	}
	c, err := budget.Exact(*encoding)
	if err != nil {
		return usageError{err}
	}
	var data []byte
	if name := fs.Arg(0); name != "" && name != "-" {
		data, err = os.ReadFile(name)
	} else {
		data, err = io.ReadAll(stdin)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, c.Count(string(data)))
	return err
}

func usageErrorOf(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usageError{err}
}
