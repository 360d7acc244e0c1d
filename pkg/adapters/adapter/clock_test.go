package adapter

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/pkg/canonical"
)

func TestClock(t *testing.T) {
	t.Parallel()
	ingest := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	recorded := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	var zero time.Time
	for _, tc := range []struct {
		name   string
		frames [][2]time.Time // arrival, provider time
		want   []time.Time
	}{
		{"no provider time: arrival", [][2]time.Time{{ingest, zero}, {ingest.Add(ms(1)), zero}},
			[]time.Time{ingest, ingest.Add(ms(1))}},
		{"the provider's time wins", [][2]time.Time{{ingest, recorded}},
			[]time.Time{recorded}},
		{"after it, arrival shifted onto the provider's clock",
			[][2]time.Time{{ingest, recorded}, {ingest.Add(ms(5)), zero}, {ingest.Add(ms(9)), recorded.Add(ms(2))}, {ingest.Add(ms(10)), zero}},
			[]time.Time{recorded, recorded.Add(ms(5)), recorded.Add(ms(2)), recorded.Add(ms(3))}},
		{"before it, arrival", [][2]time.Time{{ingest, zero}, {ingest.Add(ms(1)), recorded}},
			[]time.Time{ingest, recorded}},
		{"no arrival time stays zero", [][2]time.Time{{ingest, recorded}, {zero, zero}},
			[]time.Time{recorded, zero}},
		{"a provider time no event can carry counts as none",
			[][2]time.Time{{ingest, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, {ingest.Add(ms(1)), zero}},
			[]time.Time{ingest, ingest.Add(ms(1))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var c Clock
			for i, f := range tc.frames {
				require.Equal(t, tc.want[i], c.At(f[0], f[1]), "frame %d", i)
				// A session resumed from its snapshot keeps the clock.
				b, err := json.Marshal(c)
				require.NoError(t, err)
				var back Clock
				require.NoError(t, json.Unmarshal(b, &back))
				require.Equal(t, c, back)
			}
		})
	}
}

func TestUnix(t *testing.T) {
	t.Parallel()
	last := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	for _, tc := range []struct {
		sec  int64
		want time.Time
		ok   bool
	}{
		{0, time.Unix(0, 0).UTC(), true},
		{1796216346, time.Date(2026, 12, 2, 12, 59, 6, 0, time.UTC), true},
		{last.Unix(), last, true},
		{last.Unix() + 1, time.Time{}, false},
		{time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix() - 1, time.Time{}, false},
		{math.MaxInt64, time.Time{}, false},
		{math.MinInt64, time.Time{}, false},
	} {
		got, ok := Unix(tc.sec)
		require.Equal(t, tc.ok, ok, tc.sec)
		require.Equal(t, tc.want, got, tc.sec)
		if tc.sec > math.MaxInt64/1000 || tc.sec < math.MinInt64/1000 {
			continue // as milliseconds, it overflows
		}
		got, ok = UnixMilli(tc.sec * 1000)
		require.Equal(t, tc.ok, ok, tc.sec)
		require.Equal(t, tc.want, got, tc.sec)
	}
	got, ok := UnixMilli(last.UnixMilli() + 999)
	require.True(t, ok)
	require.Equal(t, last.Add(999*time.Millisecond), got)
	_, ok = UnixMilli(last.UnixMilli() + 1000)
	require.False(t, ok)
	_, ok = UnixMilli(math.MaxInt64)
	require.False(t, ok)
}

// TestIngestedTimes: an event says its time is when ingest read its frame
// exactly when the frame is backlog (read after it was written) and
// states no time of its own. Shifted onto the provider's time line, such
// a time is still the reading's, not the frame's.
func TestIngestedTimes(t *testing.T) {
	t.Parallel()
	read := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	written := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	var none time.Time
	var c Clock
	for i, tc := range []struct {
		backlog  bool
		provider time.Time // the frame's own time
		setOn    bool      // the adapter places it on the session's clock (SetTimeOn), else keeps the arrival
		want     bool
	}{
		{backlog: true, provider: none, want: true},
		{backlog: false, provider: none, want: false},
		{backlog: true, provider: none, setOn: true, want: true},
		{backlog: true, provider: written, setOn: true, want: false},
		{backlog: true, provider: none, setOn: true, want: true}, // the clock knows the provider's lead now
		{backlog: false, provider: none, setOn: true, want: false},
	} {
		em := NewEmitter(Frame{Tenant: "acme", SessionKey: "k", Ordinal: uint64(i + 1), ReceivedAt: read, Backlog: tc.backlog}, "codex", "x/1", canonical.Raw{})
		if tc.setOn {
			em.SetTimeOn(&c, tc.provider)
		}
		em.Emit(canonical.Event{}, &canonical.TurnStarted{})
		require.Equal(t, tc.want, em.Events()[0].CreatedAtIngested, "case %d", i)
	}
	em := NewEmitter(Frame{Tenant: "acme", SessionKey: "k", Ordinal: 9, ReceivedAt: read, Backlog: true}, "codex", "x/1", canonical.Raw{})
	em.SetTime(written)
	em.Emit(canonical.Event{}, &canonical.TurnStarted{})
	require.False(t, em.Events()[0].CreatedAtIngested, "a time the adapter read from the frame")
}

// TestArrival: a frame that states no time gets the time its log had
// been written by, when ingest read it from a log that says so, and else
// when it was read.
func TestArrival(t *testing.T) {
	t.Parallel()
	read := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	written := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for i, tc := range []struct {
		frame Frame
		want  time.Time
	}{
		{Frame{ReceivedAt: read, Backlog: true, WrittenBy: written}, written},
		{Frame{ReceivedAt: read, Backlog: true}, read},
		{Frame{ReceivedAt: read, WrittenBy: written}, read},                                                     // live: read as written
		{Frame{ReceivedAt: read, Backlog: true, WrittenBy: read.Add(time.Hour)}, read},                          // not written after it was read
		{Frame{ReceivedAt: read, Backlog: true, WrittenBy: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, read}, // no event carries it
		{Frame{ReceivedAt: written, Backlog: true, WrittenBy: written}, written},                                // agentwire map: both the file's time
	} {
		require.True(t, tc.want.Equal(tc.frame.Arrival()), "case %d: %s", i, tc.frame.Arrival())
	}

	// The events of a frame that states no time take it, on the session's
	// clock too: before the provider's time is known as it is, after it
	// shifted onto the provider's time line.
	var c Clock
	f := Frame{Tenant: "acme", SessionKey: "k", Ordinal: 1, ReceivedAt: read, Backlog: true, WrittenBy: written}
	em := NewEmitter(f, "codex", "x/1", canonical.Raw{})
	em.Emit(canonical.Event{}, &canonical.TurnStarted{})
	require.True(t, written.Equal(em.Events()[0].CreatedAt))
	require.True(t, em.Events()[0].CreatedAtIngested)
	em = NewEmitter(f, "codex", "x/1", canonical.Raw{})
	require.True(t, written.Equal(em.SetTimeOn(&c, time.Time{})))
	stated := written.Add(-2 * time.Hour)
	f.Ordinal = 2
	em = NewEmitter(f, "codex", "x/1", canonical.Raw{})
	require.True(t, stated.Equal(em.SetTimeOn(&c, stated)))
	f.Ordinal = 3
	em = NewEmitter(f, "codex", "x/1", canonical.Raw{})
	require.True(t, stated.Equal(em.SetTimeOn(&c, time.Time{})), "the last stated time, not the read two days later plus the lead")
}

func TestMeasured(t *testing.T) {
	t.Parallel()
	neg, zero, secs := int64(-1), int64(0), 1.5
	require.Nil(t, Measured[int64](nil))
	require.Nil(t, Measured(&neg), "a negative duration measures nothing")
	require.Equal(t, &zero, Measured(&zero))
	require.Equal(t, &secs, Measured(&secs))
}
