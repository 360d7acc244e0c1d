package adapters_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/pkg/adapters"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// TestOneClockPerSession maps every recording, and the public transcripts
// when ../shared is here, as if ingested from a file long after it was
// recorded (what `agentwire ingest file` does with a saved log): a frame's
// arrival is then days from the time the provider wrote into it, and an
// event timed by it says so. Nothing
// may end before it began: an item, turn or request whose start and end
// were stamped by different clocks (the provider's on some frames, the
// arrival's on others) had a duration of the clocks' difference, days
// negative in the tool-duration view.
func TestOneClockPerSession(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../testdata/recordings/*/*.jsonl")
	require.NoError(t, err)
	corpus, _ := filepath.Glob("../../../shared/corpus/*/*.jsonl")
	files = append(files, corpus...)
	require.NotEmpty(t, files)
	// Later than anything recorded, and a second apart per frame: far
	// enough from the provider's times that mixing the two shows.
	ingested := time.Date(2031, 6, 1, 0, 0, 0, 0, time.UTC)
	// The providers' own times go back a little now and then (Claude
	// Code writes a few lines of one moment out of order, 61 ms apart in
	// one transcript): that is their data, kept as they wrote it. Clocks
	// mixed are years apart here.
	const jitter = time.Minute
	for _, path := range files {
		lines := readLines(t, path)
		dialect, ok := adapters.Sniff(lines)
		if !ok {
			continue
		}
		a, err := adapters.Lookup(dialect)
		require.NoError(t, err)
		s := a.NewSession("")
		began := map[string]time.Time{}
		// onProvider: an event has been on the provider's clock; from then
		// on none may be on the arrival's (2031).
		onProvider := false
		for i, l := range lines {
			evs, err := s.Map(adapter.Frame{Bytes: l, Dialect: dialect, Tenant: "acme", SessionKey: "file:" + path,
				Ordinal: uint64(i + 1), ReceivedAt: ingested.Add(time.Duration(i) * time.Second), Backlog: true})
			require.NoError(t, err, "%s:%d", path, i+1)
			for _, e := range evs {
				if e.CreatedAt.Before(ingested) {
					onProvider = true
				} else {
					require.True(t, e.CreatedAtIngested, "%s:%d: %s at its arrival says so", path, i+1, e.Type())
					require.False(t, onProvider, "%s:%d: %s at its arrival, after events on the provider's clock", path, i+1, e.Type())
				}
				start, end, id := spans(e)
				if start {
					if _, seen := began[id]; !seen {
						began[id] = e.CreatedAt
					}
				}
				if at, ok := began[id]; end && ok {
					require.False(t, e.CreatedAt.Before(at.Add(-jitter)), "%s:%d: %s at %s, before it began at %s",
						path, i+1, e.Type(), e.CreatedAt.Format(time.RFC3339Nano), at.Format(time.RFC3339Nano))
				}
			}
		}
	}
}

// spans says whether e begins or ends an item, turn or request, and which.
func spans(e canonical.Event) (start, end bool, id string) {
	begins := map[canonical.Kind]bool{canonical.KindItemStarted: true, canonical.KindTurnStarted: true, canonical.KindRequestOpened: true}
	ends := map[canonical.Kind]bool{canonical.KindItemCompleted: true, canonical.KindTurnCompleted: true, canonical.KindTurnAborted: true,
		canonical.KindRequestResolved: true}
	k := e.Type()
	if !begins[k] && !ends[k] {
		return false, false, ""
	}
	// The kind's first word names what it spans; the id is that one's.
	what, _, _ := strings.Cut(string(k), ".")
	ids := map[string]string{"item": e.ItemID, "turn": e.TurnID, "request": e.RequestID}
	return begins[k], ends[k], what + " " + ids[what]
}

// TestUnwritableTimes: a frame whose time no event can carry (RFC 3339
// has four-digit years; an offset can carry 9999-12-31 into year 10000)
// maps to events at the frame's arrival, which encode; they used to fail
// to encode and were dead-lettered. A rate-limit window's reset time out
// of range is left out. The last writable instant is kept.
func TestUnwritableTimes(t *testing.T) {
	t.Parallel()
	arrival := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	last := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	lines := map[string]func(at string) string{
		"claude-log": func(at string) string {
			return `{"type":"user","timestamp":"` + at + `","sessionId":"s1","uuid":"u1","message":{"role":"user","content":"hi"}}`
		},
		"gemini-stream": func(at string) string {
			return `{"type":"init","timestamp":"` + at + `","session_id":"s1","model":"m"}`
		},
		"codex-rollout": func(at string) string {
			return `{"timestamp":"` + at + `","type":"session_meta","payload":{"id":"s1"}}`
		},
	}
	for dialect, line := range lines {
		for at, want := range map[string]time.Time{
			"9999-12-31T23:59:59-23:59": arrival,
			"0000-01-01T00:00:00+23:00": arrival,
			"9999-12-31T23:59:59Z":      last,
		} {
			requireMappedAt(t, dialect, line(at), arrival, want)
		}
	}
	for ms, want := range map[string]time.Time{"1000000000000000": arrival, "253402300799000": last} {
		requireMappedAt(t, "codex-app-server",
			`{"dir":"agent","msg":{"method":"thread/started","params":{"thread":{"id":"t1"}},"emittedAtMs":`+ms+`}}`, arrival, want)
	}

	// Rate-limit windows: resets_at in seconds, and resets_in_seconds from
	// the line's time.
	for window, want := range map[string]*time.Time{
		`"resets_at":1000000000000`:        nil,
		`"resets_at":253402300799`:         &last,
		`"resets_in_seconds":999999999999`: nil,
	} {
		evs := mapSession(t, "codex-rollout", arrival, `{"timestamp":"2026-12-06T12:00:00Z","type":"event_msg","payload":{"type":"token_count","rate_limits":{"primary":{"used_percent":5,`+window+`}}}}`)[0]
		var found bool
		for _, e := range evs {
			if p, ok := e.Payload.(*canonical.AccountRateLimitsUpdated); ok {
				found = true
				require.Len(t, p.Windows, 1, window)
				require.Equal(t, want, p.Windows[0].ResetsAt, window)
			}
		}
		require.True(t, found, "%s: no rate-limit event", window)
	}
}

// requireMappedAt maps one line of dialect, arrived at arrival: it makes
// events, each of which encodes and is at want.
func requireMappedAt(t *testing.T, dialect, line string, arrival, want time.Time) {
	t.Helper()
	evs := mapSession(t, dialect, arrival, line)[0]
	require.NotEmpty(t, evs, "%s: %s", dialect, line)
	for _, e := range evs {
		require.True(t, want.Equal(e.CreatedAt), "%s: %s: %s at %s, want %s", dialect, line, e.Type(), e.CreatedAt, want)
	}
}
