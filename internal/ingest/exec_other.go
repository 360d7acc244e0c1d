//go:build !unix

package ingest

import (
	"os/exec"
	"syscall"
)

func setProcessGroup(*exec.Cmd) {}

func signalName(s syscall.Signal) string { return s.String() }
