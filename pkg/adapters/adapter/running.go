package adapter

import (
	"slices"

	"github.com/agentwire/agentwire/pkg/canonical"
)

// running is the work a session's events started and did not end: the
// turns and items still running. The session keeps it from every
// adapter's events, so that when ingest sees the agent's process end
// it can end them (diagnostic), whatever the dialect: nothing of them can come any
// more, and a subscriber, like the turns and items tables, would
// otherwise see them run for ever.
type running struct {
	Turns []runningWork `json:"turns,omitempty"`
	Items []runningWork `json:"items,omitempty"`
}

// runningWork is one running turn or item: the envelope its end needs.
type runningWork struct {
	Session  string                 `json:"session"`
	Thread   string                 `json:"thread,omitempty"`
	Turn     string                 `json:"turn,omitempty"`
	Item     string                 `json:"item,omitempty"`
	ItemType canonical.ItemType     `json:"itemType,omitempty"`
	Refs     canonical.ProviderRefs `json:"refs,omitzero"`
}

// runningMemory bounds what running keeps: a dialect whose items end in a
// way observe does not see would otherwise grow it, and every snapshot,
// with the session. The oldest is forgotten first, and an exit leaves it
// as the events left it.
const runningMemory = 64

// observe follows the turns and items that events start and end.
func (o *running) observe(events []canonical.Event) {
	for i := range events {
		e := &events[i]
		switch p := e.Payload.(type) { //nolint:gochecksumtype // only what starts or ends a turn or an item
		case *canonical.TurnStarted:
			if e.TurnID != "" {
				o.Turns = remember(forget(o.Turns, e.TurnID, turnOf), runningWork{Session: e.SessionID, Thread: e.ThreadID, Turn: e.TurnID, Refs: e.ProviderRefs})
			}
		case *canonical.TurnCompleted, *canonical.TurnAborted:
			o.Turns = forget(o.Turns, e.TurnID, turnOf)
		case *canonical.ItemStarted:
			if e.ItemID != "" && p.ItemType != "" { // an end must name the type
				o.Items = remember(forget(o.Items, e.ItemID, itemOf), runningWork{
					Session: e.SessionID, Thread: e.ThreadID, Turn: e.TurnID, Item: e.ItemID, ItemType: p.ItemType, Refs: e.ProviderRefs,
				})
			}
		case *canonical.ItemCompleted:
			o.Items = forget(o.Items, e.ItemID, itemOf)
		}
	}
}

func turnOf(w runningWork) string { return w.Turn }
func itemOf(w runningWork) string { return w.Item }

func forget(ws []runningWork, id string, key func(runningWork) string) []runningWork {
	if id == "" {
		return ws
	}
	return slices.DeleteFunc(ws, func(w runningWork) bool { return key(w) == id })
}

func remember(ws []runningWork, w runningWork) []runningWork {
	ws = append(ws, w)
	if len(ws) > runningMemory {
		ws = slices.Delete(ws, 0, len(ws)-runningMemory)
	}
	return ws
}

// end emits the end of every open item, then of every open turn, as the
// agent's process ended (exited says how), and forgets them. An item
// failed: it never returned. A turn is interrupted, as the turn views
// read a turn whose session exited while it ran; the exit's reason is its
// error message. Neither states a text or a count: the projections keep
// what the deltas and usage reports built.
func (o *running) end(em *Emitter, exited *canonical.SessionExited) {
	for _, w := range o.Items {
		em.Emit(w.envelope(), &canonical.ItemCompleted{
			ItemType: w.ItemType, Status: canonical.ItemStatusFailed, Detail: "the agent exited before the item ended: " + exited.Reason,
		})
	}
	for _, w := range o.Turns {
		em.Emit(w.envelope(), &canonical.TurnCompleted{State: canonical.TurnStateInterrupted, ErrorMessage: exited.Reason})
	}
	*o = running{}
}

func (w runningWork) envelope() canonical.Event {
	return canonical.Event{SessionID: w.Session, ThreadID: w.Thread, TurnID: w.Turn, ItemID: w.Item, ProviderRefs: w.Refs}
}
