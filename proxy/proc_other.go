//go:build !unix

package proxy

import "os/exec"

func isolate(*exec.Cmd) {}

func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
