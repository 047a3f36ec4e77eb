//go:build !linux

package mcp

import "os/exec"

// setProcAttr does nothing outside Linux: Close stops the server.
func setProcAttr(*exec.Cmd) {}
