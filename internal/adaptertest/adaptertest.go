// Package adaptertest is the conformance suite every adapter runs: Run maps
// inputs through an adapter and checks the properties the adapter contract
// promises, whatever the dialect. Each check says what it protects.
package adaptertest

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Input is one session of frames to map.
type Input struct {
	// Name names the input in failures (a file name).
	Name string
	// Frames are the session's frames, in order, without newlines.
	Frames [][]byte
	// Partial marks an input cut off mid-session (a corpus excerpt): items,
	// requests and turns may stay open at its end.
	Partial bool
}

// Features says what a dialect does, where the checks depend on it.
type Features struct {
	// Silent reports whether a frame may map to no events (keep-alives);
	// nil means every frame must yield at least one.
	Silent func(frame []byte) bool
}

// Frames wraps raw lines as adapter frames of one session, with ordinals
// from 1 and a fixed receive time, as ingest would.
func Frames(dialect, sessionKey string, lines [][]byte) []adapter.Frame {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	out := make([]adapter.Frame, len(lines))
	for i, l := range lines {
		out[i] = adapter.Frame{
			Bytes: l, Dialect: dialect, Tenant: "conformance", SessionKey: sessionKey,
			Ordinal: uint64(i + 1), ReceivedAt: at.Add(time.Duration(i) * time.Millisecond),
		}
	}
	return out
}

// MapAll maps frames through a fresh session and returns the events of
// each frame.
func MapAll(tb testing.TB, a adapter.Adapter, frames []adapter.Frame) [][]canonical.Event {
	tb.Helper()
	out, _ := mapKinds(tb, a, frames)
	return out
}

// mapKinds is MapAll that also names the kinds of each frame: the
// session's, asked before the frame is mapped, when it knows them from
// context (adapter.ContextKinds), else the adapter's.
func mapKinds(tb testing.TB, a adapter.Adapter, frames []adapter.Frame) ([][]canonical.Event, [][]string) {
	tb.Helper()
	s := a.NewSession("")
	ck, _ := s.(adapter.ContextKinds)
	out := make([][]canonical.Event, len(frames))
	kinds := make([][]string, len(frames))
	for i, f := range frames {
		if ck != nil {
			kinds[i] = ck.KindsOf(f)
		} else {
			kinds[i] = a.Kinds(f)
		}
		evs, err := s.Map(f)
		if err != nil {
			tb.Fatalf("frame %d: %v", f.Ordinal, err)
		}
		out[i] = evs
	}
	return out, kinds
}

// Run checks every input against the adapter contract.
func Run(t *testing.T, a adapter.Adapter, inputs []Input, features Features) {
	t.Helper()
	for _, in := range inputs {
		t.Run(in.Name, func(t *testing.T) {
			t.Parallel()
			frames := Frames(a.Dialect(), "conformance/"+in.Name, in.Frames)
			perFrame, kinds := mapKinds(t, a, frames)

			// Determinism: the same frames give byte-identical events, which
			// replay, dedupe and idempotent projection rely on.
			again := MapAll(t, a, frames)
			if a, b := encodeAll(t, perFrame), encodeAll(t, again); !bytes.Equal(a, b) {
				t.Fatalf("mapping the same frames twice gave different events")
			}
			// Resumability: a session snapshotted mid-stream and restored in
			// a new session ends exactly like an uninterrupted one.
			checkResume(t, a, frames, perFrame)

			var all []canonical.Event
			for i, evs := range perFrame {
				if len(evs) == 0 && (features.Silent == nil || !features.Silent(in.Frames[i])) {
					t.Errorf("frame %d mapped to no events (nothing is dropped silently): %.200s", i+1, in.Frames[i])
				}
				checkRules(t, a, frames[i], kinds[i], evs)
				for _, e := range evs {
					checkRaw(t, e, in.Frames[i], i+1)
				}
				all = append(all, evs...)
			}
			checkEvents(t, all, in.Partial)
		})
	}
}

func encodeAll(tb testing.TB, perFrame [][]canonical.Event) []byte {
	tb.Helper()
	var b bytes.Buffer
	for _, evs := range perFrame {
		for _, e := range evs {
			doc, err := canonical.Encode(e)
			if err != nil {
				tb.Fatalf("encode %s: %v", e.Type(), err)
			}
			b.Write(doc)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func checkResume(t *testing.T, a adapter.Adapter, frames []adapter.Frame, want [][]canonical.Event) {
	t.Helper()
	if len(frames) < 2 {
		return
	}
	for _, cut := range []int{len(frames) / 3, len(frames) / 2, len(frames) - 1} {
		if cut < 1 {
			continue // a two-frame input has no frame before its first third
		}
		s := a.NewSession("")
		got := make([][]canonical.Event, 0, len(frames))
		for _, f := range frames[:cut] {
			evs, err := s.Map(f)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, evs)
		}
		snap, err := s.Snapshot()
		if err != nil {
			t.Fatalf("snapshot after frame %d: %v", cut, err)
		}
		resumed := a.NewSession("")
		if err := resumed.Restore(snap); err != nil {
			t.Fatalf("restore after frame %d: %v", cut, err)
		}
		if _, err := resumed.Map(frames[cut-1]); err == nil {
			t.Errorf("a restored session accepted frame %d again", cut)
		}
		for _, f := range frames[cut:] {
			evs, err := resumed.Map(f)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, evs)
		}
		if !bytes.Equal(encodeAll(t, got), encodeAll(t, want)) {
			t.Fatalf("snapshot after frame %d and restore gave different events than an uninterrupted run", cut)
		}
	}
}

func checkRaw(t *testing.T, e canonical.Event, frame []byte, n int) {
	t.Helper()
	if e.Raw == nil {
		t.Errorf("frame %d: %s has no raw", n, e.Type())
		return
	}
	got, err := e.Raw.Frame()
	if err != nil || !bytes.Equal(got, frame) {
		t.Errorf("frame %d: %s raw is not the frame as received", n, e.Type())
	}
}

type lifecycle struct {
	opened, closed map[string]int
}

func newLifecycle() lifecycle { return lifecycle{map[string]int{}, map[string]int{}} }

func checkEvents(t *testing.T, events []canonical.Event, partial bool) {
	t.Helper()
	ids := map[string]bool{}
	items, requests, turns := newLifecycle(), newLifecycle(), newLifecycle()
	for i, e := range events {
		where := fmt.Sprintf("event %d (%s)", i, e.Type())
		if err := canonical.Validate(e); err != nil {
			t.Errorf("%s does not validate: %v", where, err)
		}
		if ids[e.EventID] {
			t.Errorf("%s: duplicate event id %s", where, e.EventID)
		}
		ids[e.EventID] = true
		refs := []string{e.ProviderRefs.ProviderSessionID, e.ProviderRefs.ProviderThreadID, e.ProviderRefs.ProviderTurnID, e.ProviderRefs.ProviderItemID, e.ProviderRefs.ProviderRequestID}
		for _, id := range []string{e.SessionID, e.ThreadID, e.TurnID, e.ItemID, e.RequestID} {
			for _, ref := range refs {
				if id != "" && id == ref {
					t.Errorf("%s: provider id %q in a canonical id field", where, id)
				}
			}
		}
		switch e.Payload.(type) { //nolint:gochecksumtype // only lifecycle events pair up; the rest need no check
		case *canonical.ItemStarted:
			open(t, where, "item", e.ItemID, items)
		case *canonical.ItemUpdated, *canonical.ContentDelta:
			if e.ItemID == "" || items.opened[e.ItemID] == 0 || items.closed[e.ItemID] > 0 {
				t.Errorf("%s: item %q is not started, or already completed", where, e.ItemID)
			}
		case *canonical.ItemCompleted:
			closeOne(t, where, "item", e.ItemID, items)
		case *canonical.RequestOpened:
			open(t, where, "request", e.RequestID, requests)
		case *canonical.RequestResolved:
			closeOne(t, where, "request", e.RequestID, requests)
		case *canonical.TurnStarted:
			open(t, where, "turn", e.TurnID, turns)
		case *canonical.TurnCompleted:
			closeOne(t, where, "turn", e.TurnID, turns)
		}
	}
	if partial {
		return
	}
	for what, lc := range map[string]lifecycle{"item": items, "request": requests, "turn": turns} {
		for id := range lc.opened {
			if lc.closed[id] == 0 {
				t.Errorf("%s %s was opened and never closed", what, id)
			}
		}
	}
}

func open(t *testing.T, where, what, id string, lc lifecycle) {
	t.Helper()
	if id == "" {
		t.Errorf("%s: %s id is missing", where, what)
		return
	}
	if lc.opened[id] > 0 {
		t.Errorf("%s: %s %s started twice", where, what, id)
	}
	lc.opened[id]++
}

func closeOne(t *testing.T, where, what, id string, lc lifecycle) {
	t.Helper()
	if id == "" {
		t.Errorf("%s: %s id is missing", where, what)
		return
	}
	if lc.opened[id] == 0 {
		t.Errorf("%s: %s %s completed without being started", where, what, id)
	}
	if lc.closed[id] > 0 {
		t.Errorf("%s: %s %s completed twice", where, what, id)
	}
	lc.closed[id]++
}

// checkRules holds a frame of known kinds to its rules: every event it
// maps to is of a type the rules of its kinds list. A runtime.warning the
// rules do not list means a known kind was not really mapped (the drift
// radar would cry wolf), so it fails; an unlisted runtime.error is
// tolerated, because any frame may carry a field that cannot be read.
func checkRules(t *testing.T, a adapter.Adapter, f adapter.Frame, kinds []string, evs []canonical.Event) {
	t.Helper()
	var allowed []canonical.Kind
	for _, k := range kinds {
		r, ok := a.Rules().Lookup(k)
		if !ok {
			return // an unknown kind: a warning is the right answer
		}
		allowed = append(allowed, r.Emits...)
	}
	if len(kinds) == 0 {
		return
	}
	for _, e := range evs {
		if slices.Contains(allowed, e.Type()) || e.Type() == canonical.KindRuntimeError {
			continue
		}
		t.Errorf("frame %d of kind %v mapped to %s, which its rules do not list: %.300s", f.Ordinal, kinds, e.Type(), f.Bytes)
	}
}

// Fuzz is the body of an adapter's fuzz target: two frames mapped in
// order by one session never make it fail, and every event it returns
// validates and round-trips through its JSON document. A frame must map
// to at least one event unless silent says it may map to none; nil means
// every frame must yield one. The caller adds its seeds, pairs of frames.
// The agent's process then exits (the frame ingest adds), which ends
// whatever the two frames left running: those events must validate too.
func Fuzz(f *testing.F, a adapter.Adapter, silent func(frame []byte) bool) {
	exit := []byte(`{"agentwire":"exit","code":137,"signal":"SIGKILL"}`)
	f.Fuzz(func(t *testing.T, first, second []byte) {
		s := a.NewSession("")
		for i, frame := range [][]byte{first, second, exit} {
			evs, err := s.Map(Frames(a.Dialect(), "fuzz", [][]byte{frame})[0].WithOrdinal(uint64(i + 1)))
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) == 0 && (silent == nil || !silent(frame)) {
				t.Fatalf("frame %q mapped to nothing", frame)
			}
			if i == 2 && (len(evs) == 0 || evs[len(evs)-1].Type() != canonical.KindSessionExited) {
				t.Fatalf("the exit after %q and %q does not end with session.exited", first, second)
			}
			for _, e := range evs {
				if err := canonical.Validate(e); err != nil {
					t.Fatalf("invalid %s: %v", e.Type(), err)
				}
				doc, err := canonical.Encode(e)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := canonical.Decode(doc); err != nil {
					t.Fatalf("does not round-trip: %v", err)
				}
			}
		}
	})
}

// AnyFrame lets every frame map to no event, for Fuzz.
func AnyFrame([]byte) bool { return true }

// MapLines maps lines through one session of a, as the frames of one
// input (Frames, session key "t"), and returns their events in order.
func MapLines(tb testing.TB, a adapter.Adapter, lines ...string) []canonical.Event {
	tb.Helper()
	raw := make([][]byte, len(lines))
	for i, l := range lines {
		raw[i] = []byte(l)
	}
	return Flat(MapAll(tb, a, Frames(a.Dialect(), "t", raw)))
}

// Flat is the events of every frame, in order.
func Flat(perFrame [][]canonical.Event) []canonical.Event {
	var out []canonical.Event
	for _, evs := range perFrame {
		out = append(out, evs...)
	}
	return out
}

// Kinds are the events' types, in order.
func Kinds(evs []canonical.Event) []canonical.Kind {
	out := make([]canonical.Kind, len(evs))
	for i, e := range evs {
		out[i] = e.Type()
	}
	return out
}
