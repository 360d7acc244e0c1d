package normalize

import (
	"sync"
	"time"
)

// pacer keeps the partitions of one normalizer within a window of RAW
// stream sequences of each other while they drain a backlog. Each
// partition's consumer reads RAW where its own next frame is, and
// nats-server loads a whole message block (8 MB) into memory to serve a
// read: sixteen partitions spread over a backlog hold sixteen blocks,
// memory that grows with the backlog. Kept close together, they share one
// or two. A partition that is caught up, or has not moved for a while (a
// gap waiting for a redelivery), holds nobody back.
type pacer struct {
	window uint64
	stale  time.Duration
	now    func() time.Time

	mu  sync.Mutex
	pos []position
}

type position struct {
	seq     uint64 // stream sequence of the last frame fetched; 0 when caught up
	updated time.Time
}

func newPacer(partitions int, window uint64) *pacer {
	return &pacer{window: window, stale: time.Second, now: time.Now, pos: make([]position, partitions)}
}

// fetched records where partition p is: the stream sequence of the last
// frame of its batch, and whether frames are still pending behind it.
func (pc *pacer) fetched(p int, seq uint64, pending bool) {
	if pc == nil {
		return
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if !pending {
		seq = 0
	}
	pc.pos[p] = position{seq: seq, updated: pc.now()}
}

// ahead reports whether partition p is more than the window ahead of the
// slowest partition that is still draining.
func (pc *pacer) ahead(p int) bool {
	if pc == nil || pc.window == 0 {
		return false
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	mine := pc.pos[p].seq
	if mine == 0 {
		return false
	}
	now := pc.now()
	for q, o := range pc.pos {
		if q != p && o.seq != 0 && now.Sub(o.updated) < pc.stale && o.seq+pc.window < mine {
			return true
		}
	}
	return false
}
