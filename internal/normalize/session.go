package normalize

import (
	"cmp"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/pkg/adapters"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
)

// sessionEntry is an adapter session in memory with the last ordinal it
// mapped.
type sessionEntry struct {
	key     string
	session adapter.Session
	last    uint64
	// seq is the RAW sequence of the last frame mapped: where reading the
	// session back from RAW can start.
	seq uint64
}

// savedState is what the state bucket holds per session.
type savedState struct {
	Last    uint64          `json:"last"`
	Seq     uint64          `json:"seq"`
	Adapter json.RawMessage `json:"adapter"`
}

func stateKey(tenant, sessionKey string) string {
	return tenant + "." + bus.SessionToken(tenant, sessionKey)
}

// session returns the frame's session: from memory, from its saved state,
// or — when the state is gone but the session has mapped frames before —
// rebuilt from RAW.
func (w *partitionWorker) session(ctx context.Context, meta frameMeta) (*sessionEntry, error) {
	key := stateKey(meta.tenant, meta.sessionKey)
	if s := w.sessions.get(key); s != nil {
		return s, nil
	}
	a, err := adapters.Lookup(meta.dialect)
	if err != nil {
		return nil, err
	}
	s := &sessionEntry{key: key, session: a.NewSession(meta.provider)}
	// A prefetched state is used unless fetching it met an outage; a
	// read now waits one out (untilBack).
	got, ok := w.prefetched[key]
	entry, err := got.entry, got.err
	if !ok || bus.Outage(err) {
		entry, err = untilBack(ctx, w.n, func() (jetstream.KeyValueEntry, error) { return w.n.kv.Get(ctx, key) })
	}
	switch {
	case err == nil:
		var st savedState
		if err := json.Unmarshal(entry.Value(), &st); err != nil {
			return nil, fmt.Errorf("saved state of %q: %w", meta.sessionKey, err)
		}
		if err := s.session.Restore(st.Adapter); err != nil {
			return nil, fmt.Errorf("restore %q: %w", meta.sessionKey, err)
		}
		s.last, s.seq = st.Last, st.Seq
	case errors.Is(err, jetstream.ErrKeyNotFound):
		// A new session, or one whose frames were mapped but whose state
		// was never saved (a crash before the first save) or was lost: in
		// the latter cases the frame's predecessors are read back from RAW
		// and mapped again (fillGap), their events published again under
		// the same ids, which the duplicate window drops.
		if meta.ordinal > 1 {
			w.n.stats.Rebuilt.Add(1)
		}
	default:
		return nil, fmt.Errorf("load state of %q: %w", meta.sessionKey, err)
	}
	w.sessions.put(s)
	return s, nil
}

type loaded struct {
	entry jetstream.KeyValueEntry
	err   error
}

// prefetch loads, concurrently, the saved state of every session of the
// batch that is not in memory: a batch of many new or cold sessions would
// otherwise wait for one bucket round trip per session in turn.
func (w *partitionWorker) prefetch(ctx context.Context, msgs []jetstream.Msg) {
	w.prefetched = map[string]loaded{}
	var keys []string
	for _, m := range msgs {
		h := m.Headers()
		key := stateKey(h.Get(bus.HeaderTenant), h.Get(bus.HeaderSessionKey))
		if _, seen := w.prefetched[key]; seen || w.sessions.get(key) != nil {
			continue
		}
		w.prefetched[key] = loaded{}
		keys = append(keys, key)
	}
	if len(keys) < 2 {
		clear(w.prefetched)
		return
	}
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, 32)
	)
	for _, key := range keys {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			e, err := w.n.kv.Get(ctx, key)
			mu.Lock()
			w.prefetched[key] = loaded{entry: e, err: err}
			mu.Unlock()
		})
	}
	wg.Wait()
}

// rawFrame is a frame read back from RAW.
type rawFrame struct {
	meta frameMeta
	seq  uint64
	data []byte
}

func (f rawFrame) frame() adapter.Frame {
	return adapter.Frame{
		Bytes: f.data, Dialect: f.meta.dialect, Direction: f.meta.direction, Tenant: f.meta.tenant,
		SessionKey: f.meta.sessionKey, Ordinal: f.meta.ordinal, ReceivedAt: f.meta.receivedAt, Backlog: f.meta.backlog,
		WrittenBy: f.meta.writtenBy,
	}
}

// readSession reads the frames of meta's session with ordinals in
// (after, before) from RAW, starting at stream sequence startSeq, sorted by
// ordinal. It asks for the session's next message by subject, one request
// per frame, so it reads only that session's frames and never creates a
// consumer.
func (w *partitionWorker) readSession(ctx context.Context, meta frameMeta, after, before, startSeq uint64) ([]rawFrame, error) {
	n := w.n
	subject := bus.RawSessionFilter(meta.tenant, meta.sessionKey, n.layout.Config.Partitions)
	var out []rawFrame
	for seq := max(startSeq, 1); ; {
		m, err := untilBack(ctx, n, func() (*jetstream.RawStreamMsg, error) {
			return n.raw.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		})
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return nil, err
		}
		seq = m.Sequence + 1
		fm, err := parseMeta(m.Header)
		if err != nil || fm.sessionKey != meta.sessionKey || fm.ordinal <= after {
			continue
		}
		if fm.ordinal >= before {
			// Frames are mostly stored in order: past the one being
			// processed, the rest are later frames.
			if fm.ordinal == before {
				break
			}
			continue
		}
		data := m.Data
		if fm.object != "" {
			if data, err = n.object(ctx, fm.object); err != nil {
				return nil, fmt.Errorf("frame %d: %w", fm.ordinal, err)
			}
		}
		out = append(out, rawFrame{meta: fm, seq: m.Sequence, data: data})
	}
	slices.SortFunc(out, func(a, b rawFrame) int { return cmp.Compare(a.meta.ordinal, b.meta.ordinal) })
	return out, nil
}

// saveAll saves the state of every session a batch touched. A key-value
// put is a publish to the bucket's stream: the puts go out together and
// their acks are awaited together, so a batch of many short sessions costs
// one round trip, not one per session. A put that fails is retried alone.
func (n *Normalizer) saveAll(ctx context.Context, dirty map[string]*sessionEntry) error {
	type put struct {
		s   *sessionEntry
		b   []byte
		ack jetstream.PubAckFuture
	}
	puts := make([]put, 0, len(dirty))
	for _, s := range dirty {
		b, err := encodeState(s)
		if err != nil {
			return err
		}
		ack, err := n.layout.JS.PublishAsync("$KV."+bus.StateBucket+"."+s.key, b)
		if err != nil {
			ack = nil
		}
		puts = append(puts, put{s: s, b: b, ack: ack})
	}
	for _, p := range puts {
		if p.ack != nil {
			select {
			case <-p.ack.Ok():
				continue
			case err := <-p.ack.Err():
				n.log.Debug("saving state failed; retrying", "err", err)
			case <-time.After(30 * time.Second):
			}
		}
		if err := n.put(ctx, p.s.key, p.b); err != nil {
			return err
		}
	}
	return nil
}

func encodeState(s *sessionEntry) ([]byte, error) {
	snap, err := s.session.Snapshot()
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(savedState{Last: s.last, Seq: s.seq, Adapter: snap})
	if err != nil {
		return nil, fmt.Errorf("save state: %w", err)
	}
	return b, nil
}

// put saves one state, retrying with backoff.
func (n *Normalizer) put(ctx context.Context, key string, b []byte) error {
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		_, err := untilBack(ctx, n, func() (uint64, error) {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			return n.kv.Put(pctx, key, b)
		})
		if err == nil {
			return nil
		}
		if attempt >= 50 || bus.Outage(err) {
			return fmt.Errorf("save state of %s after %d attempts: %w", key, attempt, err)
		}
		n.log.Debug("saving state failed; retrying", "attempt", attempt, "err", err)
		sleep(ctx, backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
}

// sessionCache keeps the most recently used sessions of a partition.
type sessionCache struct {
	max   int
	order *list.List
	byKey map[string]*list.Element
}

func newSessionCache(maxEntries int) *sessionCache {
	return &sessionCache{max: maxEntries, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *sessionCache) get(key string) *sessionEntry {
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*sessionEntry)
	}
	return nil
}

// put adds s; the least recently used session leaves. Its state is saved
// at the end of every batch that touched it, so nothing is lost.
func (c *sessionCache) put(s *sessionEntry) {
	c.byKey[s.key] = c.order.PushFront(s)
	for c.order.Len() > c.max {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.byKey, old.Value.(*sessionEntry).key)
	}
}
