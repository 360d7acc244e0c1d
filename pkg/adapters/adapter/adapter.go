package adapter

import (
	"encoding/json"
	"fmt"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Adapter is one dialect's mapping from frames to canonical events.
type Adapter interface {
	// Dialect is the dialect name ("codex-exec", "claude-stream", ...).
	Dialect() string
	// Provider is the provider the dialect's frames come from by default.
	Provider() canonical.Provider
	// MappingVersion names the mapping; bump it with every change of what
	// the adapter emits, so replays can tell old events from new.
	MappingVersion() string
	// Rules documents the mapping of every kind the dialect can carry.
	Rules() Rules
	// Kinds names the kinds a frame is, as INVENTORY.tsv and Rules spell
	// them (an item frame can be both "item.completed" and "item:reasoning");
	// nil when the frame is not decodable.
	Kinds(f Frame) []string
	// NewSession starts mapping one ingest session. provider overrides the
	// default provider ("" keeps it), for dialects several providers speak.
	NewSession(provider canonical.Provider) Session
}

// Session maps the frames of one ingest session, in order. Its state is
// explicit and serializable: Snapshot and Restore let a normalizer resume
// after a crash exactly where it stopped.
type Session interface {
	// Map maps the next frame. Bad input never fails: it becomes
	// runtime.error or runtime.warning events. An error means the session
	// cannot go on (a frame out of order).
	Map(f Frame) ([]canonical.Event, error)
	// Snapshot serializes the session's state.
	Snapshot() ([]byte, error)
	// Restore replaces the session's state with a snapshot.
	Restore(snapshot []byte) error
}

// ContextKinds is implemented by the sessions of dialects where the kind of
// a frame depends on the frames before it: a JSON-RPC response is of the
// kind of the request it answers (an ACP `session/prompt` result), which
// only the session knows. KindsOf names the kinds of f, the frame the
// session would map next, as Adapter.Kinds does, without changing the
// session. Conformance tests ask it instead of Adapter.Kinds when a
// session implements it.
type ContextKinds interface {
	KindsOf(f Frame) []string
}

// KindsFunc names the kinds of a frame given the session's state.
type KindsFunc[S any] func(state S, f Frame) []string

// NewSessionKinds is NewSession for dialects whose frame kinds depend on
// context: the session also implements ContextKinds with kinds.
func NewSessionKinds[S ProviderState](initial S, f MapFunc[S], kinds KindsFunc[S]) Session {
	return &kindsSession[S]{session: session[S]{state: initial, step: stepOf(f)}, kinds: kinds}
}

type kindsSession[S ProviderState] struct {
	session[S]
	kinds KindsFunc[S]
}

func (s *kindsSession[S]) KindsOf(f Frame) []string { return s.kinds(s.state, f) }

// MapFunc is the pure core of an adapter: the next state and the events of
// one frame, from the current state.
type MapFunc[S any] func(state S, f Frame) (S, []canonical.Event, error)

// NewSession wraps a pure mapping function and its initial state as a
// Session. State must round-trip through encoding/json; Snapshot also
// records the last ordinal so frames cannot be replayed into the wrong
// state.
func NewSession[S ProviderState](initial S, f MapFunc[S]) Session {
	return &session[S]{state: initial, step: stepOf(f)}
}

// StepFunc is a core that maps one frame by updating the state in place:
// a frame then costs no copy of the state's slices and maps, however long
// the session has run. On an error the state must be as it was.
type StepFunc[S any] func(state *S, f Frame) ([]canonical.Event, error)

// NewStepSession is NewSession for a core that updates its state in
// place: the same ordinal check, running work and snapshot document.
func NewStepSession[S ProviderState](initial S, step StepFunc[S]) Session {
	return &session[S]{state: initial, step: step}
}

// stepOf is a pure mapping function as a step: the state is replaced only
// when the frame mapped.
func stepOf[S any](f MapFunc[S]) StepFunc[S] {
	return func(state *S, fr Frame) ([]canonical.Event, error) {
		next, events, err := f(*state, fr)
		if err != nil {
			return nil, err
		}
		*state = next
		return events, nil
	}
}

// ProviderState is what every adapter's state says: the provider its
// events are attributed to (an ACP session learns it as the agent starts).
// The sessions map ingest's diagnostic frames with it (Diagnostic) before
// the adapter sees a frame, so every dialect reads them alike and no
// adapter has to remember to.
type ProviderState interface {
	SessionProvider() canonical.Provider
}

// mapDiagnostic maps f when it is a diagnostic frame (Diagnostic), with
// the provider of state, which it asks for only then, and the session's
// running work, which an exit ends.
func mapDiagnostic[S ProviderState](state *S, open *running, f Frame) ([]canonical.Event, bool) {
	if !IsDiagnostic(f) {
		return nil, false
	}
	return diagnostic(f, (*state).SessionProvider(), open)
}

type session[S ProviderState] struct {
	state S
	open  running
	last  uint64
	step  StepFunc[S]
}

// snapshot is the document a session's Snapshot writes: the last ordinal
// mapped, the adapter's state and the running work.
type snapshot[S any] struct {
	LastOrdinal uint64  `json:"lastOrdinal"`
	State       S       `json:"state"`
	Open        running `json:"open,omitzero"`
}

func (s *session[S]) Map(f Frame) ([]canonical.Event, error) {
	if f.Ordinal <= s.last {
		return nil, fmt.Errorf("map frame %d of session %q: already mapped up to %d", f.Ordinal, f.SessionKey, s.last)
	}
	if events, ok := mapDiagnostic(&s.state, &s.open, f); ok {
		s.last = f.Ordinal
		return events, nil
	}
	events, err := s.step(&s.state, f)
	if err != nil {
		return nil, err
	}
	s.last = f.Ordinal
	s.open.observe(events)
	return events, nil
}

func (s *session[S]) Snapshot() ([]byte, error) {
	b, err := json.Marshal(snapshot[S]{LastOrdinal: s.last, State: s.state, Open: s.open})
	if err != nil {
		return nil, fmt.Errorf("snapshot adapter state: %w", err)
	}
	return b, nil
}

func (s *session[S]) Restore(b []byte) error {
	var snap snapshot[S]
	if err := jsonscan.Unmarshal(b, &snap); err != nil {
		return fmt.Errorf("restore adapter state: %w", err)
	}
	s.state, s.open, s.last = snap.State, snap.Open, snap.LastOrdinal
	return nil
}
