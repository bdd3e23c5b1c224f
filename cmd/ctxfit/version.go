package main

import (
	"fmt"
	"io"

	"github.com/ctxfit/ctxfit/internal/buildinfo"
)

// runVersion is `ctxfit version` and `ctxfit --version`: one line with the
// module version, the VCS revision (and whether the tree was modified), the
// toolchain and the platform.
func runVersion(args []string, stdout io.Writer) error {
	fs := newFlagSet("version", stdout)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: ctxfit version\n\nPrints the module version and VCS revision ctxfit was built from.")
	}
	if err := fs.Parse(args); err != nil {
		return usageErrorOf(err)
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("takes no arguments, got %q", fs.Arg(0))}
	}
	_, err := fmt.Fprintln(stdout, buildinfo.Read())
	return err
}
