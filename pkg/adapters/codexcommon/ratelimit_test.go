package codexcommon

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/pkg/canonical"
)

func TestRateLimitWindows(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 9, 25, 9, 0, 0, 0, time.UTC)
	pct := func(v float64) *float64 { return &v }
	mins := func(v int64) *int64 { return &v }
	at := func(t time.Time) *time.Time { return &t }
	for _, tt := range []struct {
		name, snapshot string
		want           []canonical.RateLimitWindow
	}{
		{"app-server", `{"primary":{"usedPercent":4,"windowDurationMins":300,"resetsAt":1771890497},"secondary":null}`,
			[]canonical.RateLimitWindow{{Name: "primary", UsedPercent: pct(4), WindowMinutes: mins(300), ResetsAt: at(time.Unix(1771890497, 0).UTC())}}},
		{"core", `{"limit_id":"codex","primary":{"used_percent":2.5,"window_minutes":299,"resets_in_seconds":60},"secondary":{"used_percent":12,"window_minutes":10079}}`,
			[]canonical.RateLimitWindow{
				{Name: "primary", UsedPercent: pct(2.5), WindowMinutes: mins(299), ResetsAt: at(now.Add(time.Minute))},
				{Name: "secondary", UsedPercent: pct(12), WindowMinutes: mins(10079)},
			}},
		// Codex CLI of September 2025.
		{"flat", `{"primary_used_percent":2.0,"secondary_used_percent":12.0,"primary_to_secondary_ratio_percent":0.0,"primary_window_minutes":299,"secondary_window_minutes":10079}`,
			[]canonical.RateLimitWindow{
				{Name: "primary", UsedPercent: pct(2), WindowMinutes: mins(299)},
				{Name: "secondary", UsedPercent: pct(12), WindowMinutes: mins(10079)},
			}},
		{"flat, one window", `{"primary_used_percent":7,"primary_resets_in_seconds":120}`,
			[]canonical.RateLimitWindow{{Name: "primary", UsedPercent: pct(7), ResetsAt: at(now.Add(2 * time.Minute))}}},
		{"no windows", `{"limit_id":"codex","primary":null,"secondary":null}`, nil},
		{"not an object", `null`, nil},
	} {
		require.Equal(t, tt.want, RateLimitWindows(json.RawMessage(tt.snapshot), now), tt.name)
	}
}
