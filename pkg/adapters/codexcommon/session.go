package codexcommon

import (
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// StepFunc maps one frame by updating the state in place. It is the core
// the dialects' pure Map functions wrap (Map clones the state, then
// steps): the session steps its own state, so a frame costs no copy of
// the state's slices and maps, however long the session has run.
type StepFunc[S any] func(state *S, f adapter.Frame) []canonical.Event

// NewSession is adapter.NewStepSession for a core that never fails.
func NewSession[S adapter.ProviderState](initial S, step StepFunc[S]) adapter.Session {
	return adapter.NewStepSession(initial, func(state *S, f adapter.Frame) ([]canonical.Event, error) {
		return step(state, f), nil
	})
}
