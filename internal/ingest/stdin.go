package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/agentwire/agentwire/pkg/adapters"
)

// StdinSessionKey is the session key of standard input read from start:
// "stdin:" + the start time (RFC 3339, nanoseconds, UTC).
func StdinSessionKey(start time.Time) string {
	return "stdin:" + start.UTC().Format(time.RFC3339Nano)
}

// ErrUnknownDialect is returned when a dialect was left to sniffing and the
// first frame does not tell it.
var ErrUnknownDialect = errors.New("the dialect cannot be told from the first frame; pass --dialect")

// Stream ingests r as one session and flushes. When s.Dialect is "" or
// AutoDialect, it is sniffed from the first frame, which is held back
// until then; the dialect used is returned.
func (in *Ingester) Stream(ctx context.Context, r io.Reader, s Session) (dialect string, frames, size uint64, err error) {
	br := bufio.NewReaderSize(r, readBufferSize)
	if s.Dialect == "" || s.Dialect == AutoDialect {
		first, err := firstFrame(br)
		if err != nil {
			return "", 0, 0, err
		}
		if first == nil {
			return "", 0, 0, nil // no frames at all
		}
		d, ok := adapters.Sniff([][]byte{first})
		if !ok {
			return "", 0, 0, ErrUnknownDialect
		}
		in.Log.Info("sniffed dialect", "session", s.Key, "dialect", d)
		s.Dialect = d
		if err := in.publish(ctx, s, first, ""); err != nil {
			return d, 0, 0, err
		}
		frames, size = 1, uint64(len(first))
	}
	stopReleasing := in.releaseHeld(ctx)
	n, sz, err := in.Reader(ctx, br, s, nil)
	stopReleasing()
	frames += n
	size += sz
	fctx, cancel := flushContext(ctx)
	defer cancel()
	if ferr := in.Pub.Flush(fctx); ferr != nil && err == nil {
		err = fmt.Errorf("flush: %w", ferr)
	}
	return s.Dialect, frames, size, err
}

// firstFrame reads the first non-empty line of br, or nil at the end of
// the input.
func firstFrame(br *bufio.Reader) ([]byte, error) {
	for {
		line, err := br.ReadBytes('\n')
		line = bytes.TrimSuffix(line, []byte("\n"))
		if len(bytes.TrimSpace(line)) > 0 {
			return line, nil
		}
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read frames: %w", err)
		}
	}
}
