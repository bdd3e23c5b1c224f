//go:build race

package bpe

// exhaustive reports whether the exhaustive comparisons run in full: not
// under -race, which checks no concurrency in them at ten times their cost
// (test.sh runs them in full once, in its run without -race).
func exhaustive() bool { return false }
