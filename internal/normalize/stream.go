package normalize

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// StreamMeta is the ingest metadata of a stream of frames read as one
// session.
type StreamMeta struct {
	// Dialect, Tenant and SessionKey are stamped on every frame.
	Dialect, Tenant, SessionKey string
	// ReceivedAt is the receive time given to every frame.
	ReceivedAt time.Time
	// Backlog says the frames were written before they are read.
	Backlog bool
	// WrittenBy is when a backlog had been written by (zero: not known).
	WrittenBy time.Time
}

// MapReader reads newline-separated frames from r (empty lines are not
// frames), numbers them from 1, maps them through s in order and hands
// every event to emit. It is how a session is mapped offline (`agentwire
// map`); a line may be of any length.
func MapReader(ctx context.Context, r io.Reader, s adapter.Session, meta StreamMeta, emit func(canonical.Event) error) (frames uint64, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		if err := ctx.Err(); err != nil {
			return frames, err
		}
		line, readErr := br.ReadBytes('\n')
		line = bytes.TrimSuffix(line, []byte("\n"))
		if len(bytes.TrimSpace(line)) > 0 {
			frames++
			f := adapter.Frame{
				Bytes: line, Dialect: meta.Dialect, Tenant: meta.Tenant, SessionKey: meta.SessionKey,
				Ordinal: frames, ReceivedAt: meta.ReceivedAt, Backlog: meta.Backlog, WrittenBy: meta.WrittenBy,
			}
			events, err := s.Map(f)
			if err != nil {
				return frames, fmt.Errorf("frame %d: %w", frames, err)
			}
			for _, e := range events {
				if err := emit(e); err != nil {
					return frames, err
				}
			}
		}
		if errors.Is(readErr, io.EOF) {
			return frames, nil
		}
		if readErr != nil {
			return frames, fmt.Errorf("read frames: %w", readErr)
		}
	}
}
