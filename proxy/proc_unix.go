//go:build unix

package proxy

import (
	"os/exec"
	"syscall"
)

// isolate puts the upstream in a process group of its own, so that
// killing it also kills what it started (npx, uvx and shell wrappers run
// the server as a child).
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// kill kills the upstream's process group.
func kill(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		_ = cmd.Process.Kill()
	}
}
