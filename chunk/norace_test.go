//go:build !race

package chunk_test

// raceEnabled reports whether the tests run under the race detector, which
// makes them some ten times slower.
const raceEnabled = false
