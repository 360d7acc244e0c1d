package project

import (
	"context"
	"errors"
	"io"
)

// ErrNotImplemented is returned by Run until the service lands.
var ErrNotImplemented = errors.New("the project service is not implemented in this version")

// Run runs the project service with its command-line arguments until ctx is
// cancelled.
func Run(_ context.Context, _ []string, _, _ io.Writer) error { return ErrNotImplemented }
