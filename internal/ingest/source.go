package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// readBufferSize is the bufio.Reader size; a line longer than it is still
// read whole (ReadBytes grows), so frames have no length limit.
const readBufferSize = 1 << 16

// ReadLines calls fn with every non-empty line of r, without its newline,
// in order. A line that holds only white space is not a frame (the same
// rule as `agentwire map`, so ordinals agree). The slice fn gets is its
// own. A line may be of any length and hold any bytes.
func ReadLines(ctx context.Context, r io.Reader, fn func(line []byte) error) error {
	br := bufio.NewReaderSize(r, readBufferSize)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, readErr := br.ReadBytes('\n')
		line = bytes.TrimSuffix(line, []byte("\n"))
		if len(bytes.TrimSpace(line)) > 0 {
			if err := fn(line); err != nil {
				return err
			}
		}
		if errors.Is(readErr, io.EOF) {
			return nil
		}
		if readErr != nil {
			return fmt.Errorf("read frames: %w", readErr)
		}
	}
}

// Ingester publishes the frames of its sources through a Publisher.
type Ingester struct {
	// Pub publishes the frames.
	Pub *Publisher
	// Log receives progress and warnings.
	Log *slog.Logger
	// Provider attributes every frame to a provider ("" lets the adapter decide).
	Provider canonical.Provider
	// Now is the clock (time.Now when nil); receive times come from it.
	Now func() time.Time
}

func (in *Ingester) now() time.Time {
	if in.Now != nil {
		return in.Now()
	}
	return time.Now()
}

// Session is one ingest session: its key and the dialect of its frames.
type Session struct {
	Key     string
	Dialect string
	// Backlog says its frames were written before they are read (a file
	// ingested after the fact): their receive times are not their times.
	Backlog bool
	// WrittenBy is when a backlog had been written up to: the file's
	// modification time when it was opened. Zero when not known (a pipe).
	WrittenBy time.Time
}

// WrittenFile says whether r is a file on disk (a file ingested, or
// standard input redirected from one), which was written before it is
// read, and when it was last written: the time its frames were written by.
func WrittenFile(r io.Reader) (modTime time.Time, regular bool) {
	f, ok := r.(*os.File)
	if !ok {
		return time.Time{}, false
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return time.Time{}, false
	}
	return info.ModTime(), true
}

// ParseWrittenBy reads a time a log had been written by, as a user gives
// it (--written-by, the Agentwire-Written-By request header).
func ParseWrittenBy(v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("want an RFC 3339 time such as 2026-05-01T12:00:00Z, got %q", v)
	}
	return t, nil
}

// publish publishes one frame of s read now.
func (in *Ingester) publish(ctx context.Context, s Session, line []byte, dir adapter.Direction) error {
	_, err := in.Pub.Publish(ctx, Frame{
		SessionKey: s.Key, Dialect: s.Dialect, Provider: in.Provider, Direction: dir,
		Bytes: line, ReceivedAt: in.now(), Backlog: s.Backlog, WrittenBy: s.WrittenBy,
	})
	if err != nil {
		return fmt.Errorf("session %s: %w", s.Key, err)
	}
	return nil
}

// Reader publishes every line of r as a frame of s and returns how many
// frames and bytes (without newlines) it published. progress, when not
// nil, is called after each frame with its size.
func (in *Ingester) Reader(ctx context.Context, r io.Reader, s Session, progress func(frameBytes int)) (frames, size uint64, err error) {
	err = ReadLines(ctx, r, func(line []byte) error {
		if err := in.publish(ctx, s, line, ""); err != nil {
			return err
		}
		frames++
		size += uint64(len(line))
		if progress != nil {
			progress(len(line))
		}
		return nil
	})
	return frames, size, err
}

// releaseEvery is how often a live source, while its input is silent,
// stores the frames a NATS outage held (Publisher.Release).
const releaseEvery = time.Second

// releaseHeld stores the frames a NATS outage held once it is back, every
// releaseEvery, until the returned stop is called: a live source (a
// command, a pipe) that is silent then would otherwise keep them until
// its next frame or its end.
func (in *Ingester) releaseHeld(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(releaseEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := in.Pub.Release(ctx); err != nil && ctx.Err() == nil {
					in.Log.Warn("storing the frames held while NATS was away failed; the next frame tries again", "err", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}
