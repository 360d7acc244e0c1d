package adapter

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/agentwire/agentwire/internal/jsonscan"
)

// Direction says who wrote a frame on a two-way stdio stream.
type Direction string

// Directions.
const (
	// FromAgent is a frame the agent process wrote (stdout); the default.
	FromAgent Direction = "agent"
	// FromClient is a frame the controlling app wrote to the agent (stdin).
	FromClient Direction = "client"
)

// Frame is one provider frame with its ingest metadata.
type Frame struct {
	// Bytes is the frame exactly as received: one line, without the newline.
	Bytes []byte
	// Dialect is the adapter dialect the frame was ingested as.
	Dialect string
	// Direction is who wrote it, when the source knows (tap lines, taps).
	Direction Direction
	// Tenant owns the frame.
	Tenant string
	// SessionKey is the ingest session the frame belongs to.
	SessionKey string
	// Ordinal numbers the frame within its session, from 1, without gaps.
	Ordinal uint64
	// ReceivedAt is when ingest read the frame.
	ReceivedAt time.Time
	// Backlog says the frame was read from a log after it was written (a
	// file ingested after the fact, or the part of a followed file that
	// was there when following began): ReceivedAt is not when it was
	// written.
	Backlog bool
	// WrittenBy is, for a backlog frame, a time by which it had been
	// written when ingest knows one (the modification time of its file).
	WrittenBy time.Time
}

// Arrival is the time a frame gets when it states none of its own: when
// ingest read it, or for a backlog frame the time its log had been
// written by, when that is known and not after the read. Reading a log
// days later then times it on the day it was written, not read.
func (f Frame) Arrival() time.Time {
	if f.Backlog && !f.WrittenBy.IsZero() && Writable(f.WrittenBy) && !f.WrittenBy.After(f.ReceivedAt) {
		return f.WrittenBy
	}
	return f.ReceivedAt
}

// tapLine is the recorded form of a two-way stream: {"dir":..., "msg":...}.
type tapLine struct {
	Dir *Direction      `json:"dir"`
	Msg json.RawMessage `json:"msg"`
}

// Unwrap returns the message a frame carries and who sent it. A tap line
// (a JSON object whose first member is "dir", as agentwire's recorder and
// proxy write them) yields its msg and dir; anything else is returned as
// is, with the frame's own Direction (FromAgent when unset). Checking the
// prefix keeps ordinary frames from being parsed twice. ok is false when a
// tap line is malformed (dir is not agent or client, or msg is missing).
func (f Frame) Unwrap() (msg []byte, dir Direction, ok bool) {
	dir = f.Direction
	if dir == "" {
		dir = FromAgent
	}
	trimmed := bytes.TrimSpace(f.Bytes)
	if !bytes.HasPrefix(trimmed, []byte(`{"dir"`)) {
		return f.Bytes, dir, true
	}
	var tl tapLine
	if err := jsonscan.Unmarshal(trimmed, &tl); err != nil || tl.Dir == nil {
		return f.Bytes, dir, false
	}
	if (*tl.Dir != FromAgent && *tl.Dir != FromClient) || len(tl.Msg) == 0 {
		return f.Bytes, dir, false
	}
	return tl.Msg, *tl.Dir, true
}

// WithOrdinal returns a copy of f with another ordinal.
func (f Frame) WithOrdinal(n uint64) Frame {
	f.Ordinal = n
	return f
}
