package normalize

import (
	"testing"
	"time"
)

func TestPacer(t *testing.T) {
	t.Parallel()

	now := time.Unix(100, 0)
	pc := newPacer(3, 2500)
	pc.now = func() time.Time { return now }

	if pc.ahead(0) {
		t.Fatal("a partition that has fetched nothing is ahead")
	}
	pc.fetched(0, 5000, true)
	pc.fetched(1, 2000, true)
	pc.fetched(2, 4000, true)
	if !pc.ahead(0) {
		t.Fatal("3000 sequences ahead of partition 1 with a window of 2500 is not ahead")
	}
	if pc.ahead(2) || pc.ahead(1) {
		t.Fatal("partitions within the window are held back")
	}
	pc.fetched(1, 2000, false) // caught up: no longer a reason to wait
	if pc.ahead(0) {
		t.Fatal("a caught-up partition holds others back")
	}
	pc.fetched(1, 2000, true)
	now = now.Add(2 * time.Second) // partition 1 is stuck (a gap), 0 and 2 move on
	pc.fetched(0, 5100, true)
	pc.fetched(2, 4100, true)
	if pc.ahead(0) {
		t.Fatal("a partition that has not moved for longer than stale holds others back")
	}
	var nilPacer *pacer
	nilPacer.fetched(0, 1, true)
	if nilPacer.ahead(0) {
		t.Fatal("no pacer holds nothing back")
	}
}
