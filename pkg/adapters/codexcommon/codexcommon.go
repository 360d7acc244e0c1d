// Package codexcommon holds what the three Codex dialects (app-server,
// exec, rollout) share because Codex itself shares it: the ThreadItem type
// names, which each surface spells differently (agentMessage, AgentMessage,
// agent_message), the usage breakdown, plan steps, rate-limit windows and
// error classes. It keeps the dialects from disagreeing on the same fact.
package codexcommon

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// itemTypes maps Codex item type names, folded by normKey, to canonical
// item types. One table serves the app-server's camelCase ThreadItem tags,
// the rollout's PascalCase TurnItem tags and exec's snake_case tags.
var itemTypes = map[string]canonical.ItemType{
	"usermessage":         canonical.ItemTypeUserMessage,
	"hookprompt":          canonical.ItemTypeUserMessage, // a prompt a hook injects speaks for the user
	"agentmessage":        canonical.ItemTypeAssistantMessage,
	"functioncalloutput":  canonical.ItemTypeDynamicToolCall, // client-supplied output of a client-run tool
	"plan":                canonical.ItemTypePlan,
	"todolist":            canonical.ItemTypePlan,
	"reasoning":           canonical.ItemTypeReasoning,
	"commandexecution":    canonical.ItemTypeCommandExecution,
	"filechange":          canonical.ItemTypeFileChange,
	"mcptoolcall":         canonical.ItemTypeMCPToolCall,
	"dynamictoolcall":     canonical.ItemTypeDynamicToolCall,
	"collabagenttoolcall": canonical.ItemTypeCollabAgentToolCall,
	"collabtoolcall":      canonical.ItemTypeCollabAgentToolCall,
	"subagentactivity":    canonical.ItemTypeCollabAgentToolCall, // a sub-agent's work seen from its parent
	"websearch":           canonical.ItemTypeWebSearch,
	"imageview":           canonical.ItemTypeImageView,
	"imagegeneration":     canonical.ItemTypeImageView, // an image put in front of the user
	"enteredreviewmode":   canonical.ItemTypeReviewEntered,
	"exitedreviewmode":    canonical.ItemTypeReviewExited,
	"contextcompaction":   canonical.ItemTypeContextCompaction,
	"error":               canonical.ItemTypeError,
	"sleep":               canonical.ItemTypeUnknown, // a wait, no canonical counterpart
}

func normKey(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "_", ""))
}

// ItemType returns the canonical type of a Codex item type in any of its
// spellings; ok is false for a type Codex has not been seen to send.
func ItemType(codexType string) (t canonical.ItemType, ok bool) {
	t, ok = itemTypes[normKey(codexType)]
	if !ok {
		return canonical.ItemTypeUnknown, false
	}
	return t, true
}

// ItemStatus maps a Codex item status (inProgress, in_progress, completed,
// failed, declined) to a canonical one; final says which to assume when
// the item carries none.
func ItemStatus(s string, final bool) canonical.ItemStatus {
	switch normKey(s) {
	case "inprogress", "pending", "running":
		return canonical.ItemStatusInProgress
	case "completed", "success", "succeeded":
		return canonical.ItemStatusCompleted
	case "failed", "error":
		return canonical.ItemStatusFailed
	case "declined", "rejected", "denied":
		return canonical.ItemStatusDeclined
	}
	if final {
		return canonical.ItemStatusCompleted
	}
	return canonical.ItemStatusInProgress
}

// Usage folds a Codex usage object (exec's snake_case usage, the
// app-server's TokenUsageBreakdown, the rollout's token_count info). Codex
// follows the OpenAI convention: input includes cached and cache-write
// tokens, output includes reasoning; totalTokens is ignored.
func Usage(raw json.RawMessage) (canonical.TokenUsage, error) {
	u, err := canonical.FoldUsage(raw, canonical.OpenAIUsage)
	if err != nil {
		return canonical.TokenUsage{}, err //nolint:wrapcheck // FoldUsage says what failed
	}
	return u, nil
}

// PlanStep is a Codex plan step as every surface sends it.
type PlanStep struct {
	Step   string `json:"step"`
	Status string `json:"status"`
}

// Plan converts Codex plan steps (status pending, in_progress/inProgress,
// completed) into canonical ones; an unknown status reads as pending.
func Plan(steps []PlanStep) []canonical.PlanStep {
	out := make([]canonical.PlanStep, 0, len(steps))
	for _, s := range steps {
		st := canonical.PlanStepPending
		switch normKey(s.Status) {
		case "inprogress":
			st = canonical.PlanStepInProgress
		case "completed":
			st = canonical.PlanStepCompleted
		}
		out = append(out, canonical.PlanStep{Step: s.Step, Status: st})
	}
	return out
}

// window is a rate-limit window in either spelling: app-server
// (usedPercent, windowDurationMins, resetsAt in unix seconds) or core
// (used_percent, window_minutes, resets_at, or the older resets_in_seconds).
type window struct {
	UsedPercent        *float64 `json:"usedPercent"`
	UsedPercentSnake   *float64 `json:"used_percent"`
	WindowDurationMins *int64   `json:"windowDurationMins"`
	WindowMinutes      *int64   `json:"window_minutes"`
	ResetsAt           *int64   `json:"resetsAt"`
	ResetsAtSnake      *int64   `json:"resets_at"`
	ResetsInSeconds    *int64   `json:"resets_in_seconds"`
}

// RateLimitWindows lists the windows of a Codex rate-limit snapshot
// (primary, secondary), skipping absent ones, nested or in the oldest
// flat form. now anchors the older resets_in_seconds form; it is the
// frame's own time, never the clock.
func RateLimitWindows(snapshot json.RawMessage, now time.Time) []canonical.RateLimitWindow {
	var s map[string]json.RawMessage
	if jsonscan.Unmarshal(snapshot, &s) != nil {
		return nil
	}
	var out []canonical.RateLimitWindow
	for _, name := range []string{"primary", "secondary"} {
		var w *window
		if raw, ok := s[name]; !ok || jsonscan.Unmarshal(raw, &w) != nil || w == nil {
			w = flat(s, name)
		}
		if w == nil {
			continue
		}
		cw := canonical.RateLimitWindow{Name: name}
		cw.UsedPercent = nonNegF(first(w.UsedPercent, w.UsedPercentSnake))
		cw.WindowMinutes = nonNeg(first(w.WindowDurationMins, w.WindowMinutes))
		if at := first(w.ResetsAt, w.ResetsAtSnake); at != nil && *at > 0 {
			if t, ok := adapter.Unix(*at); ok {
				cw.ResetsAt = &t
			}
		} else if in := w.ResetsInSeconds; in != nil && *in >= 0 && *in < 1<<40 && !now.IsZero() {
			// Counted in whole seconds from now's: as a Duration, 292
			// years of seconds would overflow.
			if t, ok := adapter.Unix(now.Unix() + *in); ok {
				t = t.Add(time.Duration(now.Nanosecond()))
				cw.ResetsAt = &t
			}
		}
		out = append(out, cw)
	}
	return out
}

// flat reads window name of a snapshot in the oldest, flat form
// (primary_used_percent, primary_window_minutes, ...: the members of a
// nested window, prefixed by its name); nil when it has none of them.
func flat(s map[string]json.RawMessage, name string) *window {
	var w window
	found := false
	for member, dst := range map[string]any{"used_percent": &w.UsedPercentSnake, "window_minutes": &w.WindowMinutes, "resets_in_seconds": &w.ResetsInSeconds} {
		if raw, ok := s[name+"_"+member]; ok && jsonscan.Unmarshal(raw, dst) == nil {
			found = true
		}
	}
	if !found {
		return nil
	}
	return &w
}

func first[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

func nonNeg(v *int64) *int64 {
	if v == nil || *v < 0 {
		return nil
	}
	return v
}

func nonNegF(v *float64) *float64 {
	if v == nil || *v < 0 {
		return nil
	}
	return v
}

// ErrorClass classifies a Codex error by its codexErrorInfo or message:
// authentication failures are permission errors, lost connections
// transport errors, everything else the provider's. The app-server spells
// the info in camelCase (responseStreamDisconnected), a rollout in
// snake_case (response_stream_disconnected).
func ErrorClass(info json.RawMessage, message string) canonical.ErrorClass {
	s := strings.ToLower(strings.ReplaceAll(string(info), "_", "") + " " + message)
	switch {
	case strings.Contains(s, "unauthorized") || strings.Contains(s, "401") || strings.Contains(s, "forbidden"):
		return canonical.ErrorClassPermission
	case strings.Contains(s, "connectionfailed") || strings.Contains(s, "streamdisconnected"):
		return canonical.ErrorClassTransport
	}
	return canonical.ErrorClassProvider
}

// IsRetrying reports whether an error message announces a retry
// ("Reconnecting... 2/5"), which exec and older cores send as plain errors.
func IsRetrying(message string) bool {
	return strings.HasPrefix(message, "Reconnecting") || strings.HasPrefix(message, "Re-connecting")
}

// Text returns s, or fallback when s is empty.
func Text(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// Text2 returns raw, or fallback when raw is absent or null.
func Text2(raw, fallback json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return fallback
	}
	return raw
}

func slicesContains(list []string, s string) bool { return slices.Contains(list, s) }
