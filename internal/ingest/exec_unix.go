//go:build unix

package ingest

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// setProcessGroup starts the command in a process group of its own, so
// that a terminal's Ctrl-C reaches it once, forwarded by ingest, rather
// than twice.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func signalName(s syscall.Signal) string { return unix.SignalName(s) }
