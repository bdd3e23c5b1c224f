//go:build unix

package bpe

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used, user and system: on
// cores shared with other work, wall time measures the neighbours too.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
