package adapter

import (
	"slices"

	"github.com/agentwire/agentwire/pkg/canonical"
)

// Open is the work a session's events started and did not end: the turns
// and items still running. The sessions keep it from every adapter's
// events, so that when ingest sees the agent's process end (Diagnostic)
// it can end them, whatever the dialect: nothing of them can come any
// more, and a subscriber, like the turns and items tables, would
// otherwise see them run for ever.
type Open struct {
	Turns []OpenWork `json:"turns,omitempty"`
	Items []OpenWork `json:"items,omitempty"`
}

// OpenWork is one running turn or item: the envelope its end needs.
type OpenWork struct {
	Session  string                 `json:"session"`
	Thread   string                 `json:"thread,omitempty"`
	Turn     string                 `json:"turn,omitempty"`
	Item     string                 `json:"item,omitempty"`
	ItemType canonical.ItemType     `json:"itemType,omitempty"`
	Refs     canonical.ProviderRefs `json:"refs,omitzero"`
}

// openMemory bounds what Open keeps: a dialect whose items end in a way
// Observe does not see would otherwise grow it, and every snapshot, with
// the session. The oldest is forgotten first; it is left as it is today.
const openMemory = 64

// Observe follows the turns and items that events start and end.
func (o *Open) Observe(events []canonical.Event) {
	for i := range events {
		e := &events[i]
		switch p := e.Payload.(type) { //nolint:gochecksumtype // only what starts or ends a turn or an item
		case *canonical.TurnStarted:
			if e.TurnID != "" {
				o.Turns = remember(forget(o.Turns, e.TurnID, turnOf), OpenWork{Session: e.SessionID, Thread: e.ThreadID, Turn: e.TurnID, Refs: e.ProviderRefs})
			}
		case *canonical.TurnCompleted, *canonical.TurnAborted:
			o.Turns = forget(o.Turns, e.TurnID, turnOf)
		case *canonical.ItemStarted:
			if e.ItemID != "" && p.ItemType != "" { // an end must name the type
				o.Items = remember(forget(o.Items, e.ItemID, itemOf), OpenWork{
					Session: e.SessionID, Thread: e.ThreadID, Turn: e.TurnID, Item: e.ItemID, ItemType: p.ItemType, Refs: e.ProviderRefs,
				})
			}
		case *canonical.ItemCompleted:
			o.Items = forget(o.Items, e.ItemID, itemOf)
		}
	}
}

func turnOf(w OpenWork) string { return w.Turn }
func itemOf(w OpenWork) string { return w.Item }

func forget(ws []OpenWork, id string, key func(OpenWork) string) []OpenWork {
	if id == "" {
		return ws
	}
	return slices.DeleteFunc(ws, func(w OpenWork) bool { return key(w) == id })
}

func remember(ws []OpenWork, w OpenWork) []OpenWork {
	ws = append(ws, w)
	if len(ws) > openMemory {
		ws = slices.Delete(ws, 0, len(ws)-openMemory)
	}
	return ws
}

// end emits the end of every open item, then of every open turn, as the
// agent's process ended (exited says how), and forgets them. An item
// failed: it never returned. A turn is interrupted, as the turn views
// read a turn whose session exited while it ran; the exit's reason is its
// error message. Neither states a text or a count: the projections keep
// what the deltas and usage reports built.
func (o *Open) end(em *Emitter, exited *canonical.SessionExited) {
	for _, w := range o.Items {
		em.Emit(w.envelope(), &canonical.ItemCompleted{
			ItemType: w.ItemType, Status: canonical.ItemStatusFailed, Detail: "the agent exited before the item ended: " + exited.Reason,
		})
	}
	for _, w := range o.Turns {
		em.Emit(w.envelope(), &canonical.TurnCompleted{State: canonical.TurnStateInterrupted, ErrorMessage: exited.Reason})
	}
	*o = Open{}
}

func (w OpenWork) envelope() canonical.Event {
	return canonical.Event{SessionID: w.Session, ThreadID: w.Thread, TurnID: w.Turn, ItemID: w.Item, ProviderRefs: w.Refs}
}
