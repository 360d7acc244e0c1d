package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// ErrUsage is wrapped by errors that mean the command line or the
// configuration is unusable; they exit with ExitUsage.
var ErrUsage = errors.New("usage")

// usageError wraps ErrUsage but prints only its message.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Unwrap() error { return ErrUsage }

// Usagef returns an error that exits with ExitUsage and prints the message.
func Usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// RunFunc runs one program with its arguments (without the program name).
type RunFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// Main runs run as the whole process: it cancels the context on SIGINT or
// SIGTERM so that run can shut down cleanly, prints a returned error as one
// line prefixed with name, and exits with the matching code.
func Main(name string, run RunFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Exec(ctx, name, run, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exec runs run and turns its result into an exit code, printing errors to
// stderr. Main uses it; tests call it directly.
func Exec(ctx context.Context, name string, run RunFunc, args []string, stdout, stderr io.Writer) int {
	err := run(ctx, args, stdout, stderr)
	if err == nil {
		return ExitOK
	}
	// A command run on the user's behalf (ingest exec) has said what went
	// wrong; exit with its code.
	if coded, ok := errors.AsType[*exitCodeError](err); ok {
		return coded.code
	}
	// Nothing is left to tell if stderr itself is broken.
	_, _ = fmt.Fprintf(stderr, "%s: %v\n", name, err)
	if errors.Is(err, ErrUsage) {
		return ExitUsage
	}
	return ExitError
}
