//go:build !race

package pagination_test

// raceEnabled reports whether the tests run under the race detector, which
// makes byte-by-byte scanning some twenty times slower.
const raceEnabled = false
