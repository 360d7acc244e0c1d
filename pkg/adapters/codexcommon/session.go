package codexcommon

import (
	"encoding/json"
	"fmt"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// StepFunc maps one frame by updating the state in place. It is the core
// the dialects' pure Map functions wrap (Map clones the state, then
// steps): the session steps its own state, so a frame costs no copy of
// the state's slices and maps, however long the session has run.
type StepFunc[S any] func(state *S, f adapter.Frame) []canonical.Event

// NewSession is adapter.NewSession for a core that updates its state in
// place and never fails: same ordinal check, same running work and same
// snapshot document (adapter.Snapshot), so snapshots of either restore
// into the other.
func NewSession[S adapter.ProviderState](initial S, step StepFunc[S]) adapter.Session {
	return &session[S]{state: initial, step: step}
}

type session[S adapter.ProviderState] struct {
	state S
	open  adapter.Open
	last  uint64
	step  StepFunc[S]
}

func (s *session[S]) Map(f adapter.Frame) ([]canonical.Event, error) {
	if f.Ordinal <= s.last {
		return nil, fmt.Errorf("map frame %d of session %q: already mapped up to %d", f.Ordinal, f.SessionKey, s.last)
	}
	events, ok := adapter.MapDiagnostic(&s.state, &s.open, f)
	if !ok {
		events = s.step(&s.state, f)
		s.open.Observe(events)
	}
	s.last = f.Ordinal
	return events, nil
}

func (s *session[S]) Snapshot() ([]byte, error) {
	b, err := json.Marshal(adapter.Snapshot[S]{LastOrdinal: s.last, State: s.state, Open: s.open})
	if err != nil {
		return nil, fmt.Errorf("snapshot adapter state: %w", err)
	}
	return b, nil
}

func (s *session[S]) Restore(b []byte) error {
	var snap adapter.Snapshot[S]
	if err := jsonscan.Unmarshal(b, &snap); err != nil {
		return fmt.Errorf("restore adapter state: %w", err)
	}
	s.state, s.open, s.last = snap.State, snap.Open, snap.LastOrdinal
	return nil
}
