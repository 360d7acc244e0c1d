package project

import (
	"bytes"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentwire/agentwire/pkg/canonical"
)

// FuzzFold holds the projector's own work to never panicking: a batch of
// event documents (one a line) that decode is folded, and its statements
// and log rows built, as a worker does. A panic there would stop the
// projector on the same event after every restart. Seeds are runs of
// recorded events, so mutations keep sessions, turns and items together.
func FuzzFold(f *testing.F) {
	msgs := recordedMsgs(f)
	for i := 0; i < len(msgs); i += 7 {
		var seed [][]byte
		for _, m := range msgs[i:min(i+12, len(msgs))] {
			seed = append(seed, m.Data)
		}
		f.Add(bytes.Join(seed, []byte("\n")))
	}
	f.Fuzz(func(t *testing.T, docs []byte) {
		var batch []canonical.Event
		for doc := range bytes.SplitSeq(docs, []byte("\n")) {
			if e, err := canonical.DecodeEnvelope(doc); err == nil {
				batch = append(batch, e)
			}
		}
		w := newWrites()
		for i := range batch {
			w.fold(&batch[i])
		}
		w.queue(&pgx.Batch{})
		rows := EventSource(len(batch), func(i int) (*canonical.Event, uint64, []byte) { return &batch[i], uint64(i + 1), nil }) //nolint:gosec // i is small
		for rows.Next() {
			if _, err := rows.Values(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzFoldOrder folds valid events in any order, repeated or left out:
// each byte of the input picks a recorded event (two bytes, little end
// first, so every one is reachable). Deltas before their item, an item
// completed twice, a turn that never started: folding must take them all
// without panicking, as redelivery and partial logs produce them.
func FuzzFoldOrder(f *testing.F) {
	msgs := recordedMsgs(f)
	events := make([]canonical.Event, len(msgs))
	for i, m := range msgs {
		e, err := canonical.DecodeEnvelope(m.Data)
		if err != nil {
			f.Fatal(err)
		}
		events[i] = e
	}
	f.Add([]byte{0, 0, 1, 0, 2, 0})
	f.Add([]byte{5, 0, 4, 0, 3, 0, 2, 0, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, picks []byte) {
		var batch []canonical.Event
		for i := 0; i+1 < len(picks); i += 2 {
			batch = append(batch, events[(int(picks[i])|int(picks[i+1])<<8)%len(events)])
		}
		w := newWrites()
		for i := range batch {
			w.fold(&batch[i])
		}
		w.queue(&pgx.Batch{})
	})
}
