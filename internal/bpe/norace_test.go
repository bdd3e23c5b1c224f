//go:build !race

package bpe

import "testing"

// exhaustive reports whether the exhaustive comparisons run in full: not
// with -short.
func exhaustive() bool { return !testing.Short() }
