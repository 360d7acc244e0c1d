package adapter

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Emitter collects the events one frame maps to and stamps each with the
// envelope fields the frame determines: a deterministic event id (session
// key, ordinal, fan-out index), tenant, provider, session, time, mapping
// version and raw. Adapters set only what is specific to the event.
type Emitter struct {
	frame    Frame
	ids      canonical.IDSpace
	version  string
	raw      canonical.Raw
	at       time.Time
	ingested bool // at is a backlog frame's arrival (Frame.Arrival)
	session  string
	events   []canonical.Event
	provider canonical.Provider
}

// NewEmitter starts the events of frame f for provider p. version is the
// adapter's mapping version ("codex-app-server/1"); raw describes the frame.
func NewEmitter(f Frame, p canonical.Provider, version string, raw canonical.Raw) *Emitter {
	ids := canonical.IDSpace{Tenant: f.Tenant, Provider: p, SessionKey: f.SessionKey}
	return &Emitter{
		frame: f, ids: ids, version: version, raw: raw, at: f.Arrival(), ingested: f.Backlog,
		session: ids.IngestSession(), provider: p,
	}
}

// IDs returns the id space of the frame's session.
func (e *Emitter) IDs() canonical.IDSpace { return e.ids }

// Frame returns the frame being mapped.
func (e *Emitter) Frame() Frame { return e.frame }

// SetTime sets the events' time to the provider's own timestamp, when the
// frame has a valid one; the receive time stays otherwise.
func (e *Emitter) SetTime(t time.Time) {
	if !t.IsZero() {
		e.at, e.ingested = t, false
	}
}

// SetTimeOn sets the events' time on the session's clock (see Clock):
// the provider's time when the frame carries one (provider, zero when it
// does not), else its arrival on the provider's time line. It returns the
// time set.
func (e *Emitter) SetTimeOn(c *Clock, provider time.Time) time.Time {
	e.at = c.At(e.frame.Arrival(), provider)
	// Shifted by the provider's lead, a backlog frame's arrival is still
	// not when it was written: about the time of the last frame that had
	// one.
	e.ingested = e.frame.Backlog && !c.Stated(provider)
	return e.at
}

// ParseTime is an RFC 3339 timestamp's time, zero when s is none.
func ParseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// SetSession sets the canonical session id of the events (default: the
// ingest session's id).
func (e *Emitter) SetSession(id string) {
	if id != "" {
		e.session = id
	}
}

// Emit appends an event with the given payload; ev supplies the
// event-specific envelope fields (thread, turn, item, request ids and
// provider refs), the rest is stamped here.
func (e *Emitter) Emit(ev canonical.Event, p canonical.Payload) {
	ev.EventID = e.ids.Event(e.frame.Ordinal, len(e.events))
	ev.Tenant = e.frame.Tenant
	ev.Provider = e.provider
	if ev.SessionID == "" {
		ev.SessionID = e.session
	}
	ev.CreatedAt, ev.CreatedAtIngested = e.at, e.ingested
	ev.MappingVersion = e.version
	ev.Payload = p
	raw := e.raw
	ev.Raw = &raw
	e.events = append(e.events, ev)
}

// Finished appends an item that starts and completes within one frame:
// item.started (in progress, its content left to the completion), then
// item.completed with p.
func (e *Emitter) Finished(ev canonical.Event, p canonical.ItemLifecycle) {
	s := canonical.ItemStarted(p)
	s.Status, s.Content = canonical.ItemStatusInProgress, nil
	e.Emit(ev, &s)
	c := canonical.ItemCompleted(p)
	e.Emit(ev, &c)
}

// Warn appends a runtime.warning.
func (e *Emitter) Warn(ev canonical.Event, message string, detail any) {
	e.Emit(ev, &canonical.RuntimeWarning{Message: message, Detail: mustJSON(detail)})
}

// Fail appends a runtime.error of the given class.
func (e *Emitter) Fail(ev canonical.Event, class canonical.ErrorClass, message string, detail any) {
	e.Emit(ev, &canonical.RuntimeError{Message: message, Class: class, Detail: mustJSON(detail)})
}

// Events returns the events emitted so far.
func (e *Emitter) Events() []canonical.Event { return e.events }

// Len is the number of events emitted so far.
func (e *Emitter) Len() int { return len(e.events) }

// mustJSON encodes detail for a Detail member; nil stays absent. A value
// that cannot be encoded is described instead of dropped.
func mustJSON(v any) json.RawMessage {
	switch v := v.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		// A map of strings always encodes.
		b, _ = json.Marshal(map[string]string{"unencodable": err.Error()}) //nolint:errchkjson // see above
	}
	return b
}

// Undecodable maps a frame that is not JSON, or not the shape its dialect
// promises, to a runtime.error of class validation_error with the raw
// frame kept as it came (as a string or base64 when it is not JSON).
func Undecodable(f Frame, p canonical.Provider, version, source string, err error) []canonical.Event {
	raw := canonical.NewRaw(source, "", "", f.Bytes)
	if deep := CheckDepth(f, raw, jsonscan.Info{}); deep != nil {
		// The decoder's own limit ("exceeded max depth") says less.
		err = deep
	}
	em := NewEmitter(f, p, version, raw)
	msg := "frame could not be decoded"
	if err != nil {
		msg += ": " + firstLine(err.Error())
	}
	em.Fail(canonical.Event{}, canonical.ErrorClassValidation, msg, map[string]any{"dialect": f.Dialect, "bytes": len(f.Bytes)})
	return em.Events()
}

// CheckDepth returns an error when a frame nests deeper than an event can
// carry (canonical.MaxJSONDepth): adapters copy parts of frames into
// payloads, and an event holding a part nested past that could not be
// encoded. Adapters map such a frame with Undecodable, before it changes
// their state. info is what the adapter's jsonscan.Check of the whole
// frame found (zero when it did not scan it), raw the frame's Raw: only a
// frame not kept inline can be that deep (NewRaw keeps compact JSON inline
// up to the limit). Either way a frame is not scanned twice but when it
// is not kept inline and its adapter did not scan it.
func CheckDepth(f Frame, raw canonical.Raw, info jsonscan.Info) error {
	if !info.Valid {
		if raw.Encoding == canonical.RawJSON {
			return nil
		}
		info = jsonscan.Check(f.Bytes)
	}
	if info.Valid && info.Depth > canonical.MaxJSONDepth {
		return fmt.Errorf("it nests %d levels deep, deeper than the %d an event can carry", info.Depth, canonical.MaxJSONDepth)
	}
	return nil
}

// Unmapped maps a frame of a kind the adapter does not know to a
// runtime.warning naming the kind, raw attached: drift is surfaced, never
// dropped.
func Unmapped(em *Emitter, ev canonical.Event, kind string) {
	em.Warn(ev, "unmapped "+em.frame.Dialect+" frame kind "+kind, map[string]string{"kind": kind, "dialect": em.frame.Dialect})
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
