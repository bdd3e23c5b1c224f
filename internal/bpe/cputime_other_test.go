//go:build !unix

package bpe

import "time"

var started = time.Now()

// cpuTime returns the wall time since the start, where the process's CPU
// time is not read.
func cpuTime() time.Duration { return time.Since(started) }
