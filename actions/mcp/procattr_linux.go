package mcp

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes the kernel stop a stdio server when the gateway dies
// without closing it (kill -9), so no orphan keeps running.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
