package canonical

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fieldErrors flattens the FieldErrors of a (possibly joined) error.
func fieldErrors(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(err error) {
		if fe, ok := err.(*FieldError); ok { //nolint:errorlint // walking the tree by hand, errors.As stops at the first
			out = append(out, fe)
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		if next := errors.Unwrap(err); next != nil {
			walk(next)
		}
	}
	walk(err)
	return out
}

// TestDecodeRejects mutates valid fixtures and checks that Decode names
// the offending field and rule, and that the published schema rejects the
// same document, so Go and the schemas enforce the same contract.
func TestDecodeRejects(t *testing.T) {
	t.Parallel()

	type doc = map[string]any
	payload := func(d doc) doc { return d["payload"].(doc) }
	tests := []struct {
		name       string
		kind       Kind
		mutate     func(d doc)
		field      string
		rule       string
		sentinel   error
		schemaToo  bool
		schemaKind Kind
	}{
		{"missing event id", KindTurnStarted, func(d doc) { delete(d, "eventId") }, "eventId", "is required", ErrInvalidEvent, true, ""},
		{"event id not a uuid", KindTurnStarted, func(d doc) { d["eventId"] = "evt_1" }, "eventId", "must be a canonical id", ErrInvalidEvent, true, ""},
		{"upper-case uuid", KindTurnStarted, func(d doc) { d["eventId"] = "6F1C7A52-9A3E-5D0B-8F43-2B6A8C0E4D17" }, "eventId", "must be a canonical id", ErrInvalidEvent, true, ""},
		{"provider id in a canonical field", KindItemCompleted, func(d doc) { d["threadId"] = "thr_01" }, "threadId", "must be a canonical id", ErrInvalidEvent, true, ""},
		{"tenant with a dot", KindTurnStarted, func(d doc) { d["tenant"] = "acme.corp" }, "tenant", "may only contain", ErrInvalidSlug, true, ""},
		{"tenant with a wildcard", KindTurnStarted, func(d doc) { d["tenant"] = "ac*me" }, "tenant", "may only contain", ErrInvalidSlug, true, ""},
		{"provider with a space", KindTurnStarted, func(d doc) { d["provider"] = "co dex" }, "provider", "may only contain", ErrInvalidSlug, true, ""},
		{"provider with a gt", KindTurnStarted, func(d doc) { d["provider"] = "codex>" }, "provider", "must start and end", ErrInvalidSlug, true, ""},
		{"upper-case provider", KindTurnStarted, func(d doc) { d["provider"] = "Codex" }, "provider", "must start and end", ErrInvalidSlug, true, ""},
		{"missing time", KindTurnStarted, func(d doc) { delete(d, "createdAt") }, "createdAt", "is required", ErrInvalidEvent, true, ""},
		{"unknown type", KindTurnStarted, func(d doc) { d["type"] = "message.delta" }, "type", "must be a known event type", ErrUnknownKind, true, KindTurnStarted},
		{"missing type", KindTurnStarted, func(d doc) { delete(d, "type") }, "type", "is required", ErrInvalidEvent, true, ""},
		{"missing payload", KindTurnStarted, func(d doc) { delete(d, "payload") }, "payload", "is required", ErrInvalidEvent, true, ""},
		{"invalid turn state", KindTurnCompleted, func(d doc) { payload(d)["state"] = "done" }, "payload.state", "must be one of completed, failed, interrupted, cancelled", ErrInvalidEvent, true, ""},
		{"missing turn state", KindTurnCompleted, func(d doc) { delete(payload(d), "state") }, "payload.state", "is required", ErrInvalidEvent, true, ""},
		{"negative tokens", KindTurnCompleted, func(d doc) { payload(d)["usage"].(doc)["inputTokens"] = -1 }, "payload.usage.inputTokens", "must not be negative", ErrInvalidEvent, true, ""},
		{"negative cost", KindTurnCompleted, func(d doc) { payload(d)["totalCostUsd"] = -0.5 }, "payload.totalCostUsd", "must not be negative", ErrInvalidEvent, true, ""},
		{"invalid plan step status", KindTurnPlanUpdated, func(d doc) { payload(d)["plan"].([]any)[1].(doc)["status"] = "doing" }, "payload.plan[1].status", "must be one of pending, inProgress, completed", ErrInvalidEvent, true, ""},
		{"missing plan", KindTurnPlanUpdated, func(d doc) { delete(payload(d), "plan") }, "payload.plan", "is required", ErrInvalidEvent, true, ""},
		{"missing stream kind", KindContentDelta, func(d doc) { delete(payload(d), "streamKind") }, "payload.streamKind", "is required", ErrInvalidEvent, true, ""},
		{"invalid content key", KindItemCompleted, func(d doc) { payload(d)["content"].(doc)["bogus"] = "x" }, "payload.content key", "must be one of assistant_text", ErrInvalidEvent, true, ""},
		{"invalid item type", KindItemCompleted, func(d doc) { payload(d)["itemType"] = "tool_call" }, "payload.itemType", "must be one of user_message", ErrInvalidEvent, true, ""},
		{"invalid error class", KindRuntimeError, func(d doc) { payload(d)["class"] = "fatal" }, "payload.class", "must be one of provider_error", ErrInvalidEvent, true, ""},
		{"null unknown member", KindAccountUpdated, func(d doc) { payload(d)["account"] = nil }, "payload.account", "is required", ErrInvalidEvent, true, ""},
		{"JSON member nested too deep", KindAccountUpdated, func(d doc) { payload(d)["account"] = nested(MaxJSONDepth + 1) }, "payload.account", "must nest at most 512 levels deep", ErrInvalidEvent, false, ""},
		{"missing files", KindFilesPersisted, func(d doc) { delete(payload(d), "files") }, "payload.files", "is required", ErrInvalidEvent, true, ""},
		{"empty required string", KindModelRerouted, func(d doc) { payload(d)["toModel"] = "" }, "payload.toModel", "is required", ErrInvalidEvent, true, ""},
		{"missing raw source", KindTurnStarted, func(d doc) { delete(d["raw"].(doc), "source") }, "raw.source", "is required", ErrInvalidEvent, true, ""},
		{"invalid raw encoding", KindTurnStarted, func(d doc) { d["raw"].(doc)["encoding"] = "hex" }, "raw.encoding", "must be one of text, base64", ErrInvalidEvent, true, ""},
		{"raw not base64", KindTurnStarted, func(d doc) { d["raw"].(doc)["encoding"] = "base64"; d["raw"].(doc)["payload"] = "%%%" }, "raw.payload", "must hold the frame", ErrInvalidEvent, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var d doc
			require.NoError(t, json.Unmarshal(readFixture(t, tt.kind), &d))
			tt.mutate(d)
			b, err := json.Marshal(d)
			require.NoError(t, err)

			_, err = Decode(b)
			require.ErrorIs(t, err, ErrInvalidEvent)
			require.ErrorIs(t, err, tt.sentinel)
			var found *FieldError
			for _, fe := range fieldErrors(err) {
				if fe.Field == tt.field {
					found = fe
				}
			}
			require.NotNil(t, found, "no error names %s in: %v", tt.field, err)
			require.Contains(t, found.Rule, tt.rule)

			if tt.schemaToo {
				k := tt.schemaKind
				if k == "" {
					k = tt.kind
				}
				require.Error(t, schemaValidate(t, k, b), "the schema must reject what Decode rejects")
			}
		})
	}
}

// nested is a JSON array nested depth levels deep.
func nested(depth int) any {
	var v any = []any{}
	for range depth - 1 {
		v = []any{v}
	}
	return v
}

// TestValidateJSONDepth: a payload's JSON member may nest as deep as a
// frame kept inline, and no deeper, so every event that validates can be
// encoded: one nested past encoding/json's limit made Encode fail.
func TestValidateJSONDepth(t *testing.T) {
	t.Parallel()
	event := func(v json.RawMessage) Event {
		return Event{
			EventID: "6f1c7a52-9a3e-5d0b-8f43-2b6a8c0e4d17", Tenant: "acme", Provider: ProviderCodex,
			SessionID: "6f1c7a52-9a3e-5d0b-8f43-2b6a8c0e4d18", CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			Payload: &AccountUpdated{Account: v},
		}
	}
	deep := func(n int) json.RawMessage {
		return json.RawMessage(strings.Repeat("[", n) + strings.Repeat("]", n))
	}
	atLimit := event(deep(MaxJSONDepth))
	require.NoError(t, Validate(atLimit))
	_, err := Encode(atLimit)
	require.NoError(t, err)
	for _, n := range []int{MaxJSONDepth + 1, 10001} {
		err := Validate(event(deep(n)))
		require.ErrorIs(t, err, ErrInvalidEvent, "depth %d", n)
		require.Contains(t, err.Error(), fmt.Sprintf(`payload.account: must nest at most 512 levels deep (got "%d")`, n))
	}
}

func TestValidateReportsEveryViolation(t *testing.T) {
	t.Parallel()

	e := Event{
		EventID:   "x",
		Tenant:    "Acme",
		Provider:  ProviderCodex,
		CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Payload:   &TurnCompleted{State: "done"},
	}
	err := Validate(e)
	var fields []string
	for _, fe := range fieldErrors(err) {
		fields = append(fields, fe.Field)
	}
	require.ElementsMatch(t, []string{"eventId", "tenant", "sessionId", "payload.state"}, fields)
	require.Contains(t, err.Error(), `payload.state: must be one of completed, failed, interrupted, cancelled (got "done")`)
}

// TestValidateNamesEachElement: failures in several elements and members
// of nested values each name their own path.
func TestValidateNamesEachElement(t *testing.T) {
	t.Parallel()

	e := Event{
		EventID:   "0b4f1c52-5d5c-4c1e-9a53-0f0e8f1a2b3c",
		Tenant:    "acme",
		Provider:  ProviderCodex,
		SessionID: "1b4f1c52-5d5c-4c1e-9a53-0f0e8f1a2b3c",
		CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Payload:   &TurnPlanUpdated{Plan: []PlanStep{{Step: "a", Status: "doing"}, {Step: "b", Status: PlanStepPending}, {Step: "c", Status: "done"}}},
	}
	var fields []string
	for _, fe := range fieldErrors(Validate(e)) {
		fields = append(fields, fe.Field)
	}
	require.Equal(t, []string{"payload.plan[0].status", "payload.plan[2].status"}, fields)
}

func TestValidateNilPayload(t *testing.T) {
	t.Parallel()

	var p *TurnStarted
	err := Validate(Event{Payload: p})
	require.ErrorIs(t, err, ErrInvalidEvent)
	_, err = Encode(Event{})
	require.ErrorIs(t, err, ErrInvalidEvent)
}

func TestDecodeRejectsMalformedJSON(t *testing.T) {
	t.Parallel()

	for _, in := range []string{``, `{`, `[]`, `null`, `{"type":1}`, `{"type":"turn.started","payload":[]}`, `{"type":"turn.started","payload":{"model":7}}`} {
		_, err := Decode([]byte(in))
		require.Error(t, err, in)
	}
}

// TestEmptyOptionalText: the model's optional texts are plain strings,
// absent when empty, as adapters get them from providers that send ""
// (they were pointers, and an empty one failed validation: fuzzing found
// four adapters making such events). An empty one validates and is left
// out of the document.
func TestEmptyOptionalText(t *testing.T) {
	t.Parallel()
	ids := IDSpace{Tenant: "t", Provider: ProviderClaude, SessionKey: "k"}
	for _, p := range []Payload{&TurnPlanUpdated{Plan: []PlanStep{}}, &TurnCompleted{State: TurnStateCompleted}} {
		ev := Event{EventID: ids.Event(1, 0), Tenant: "t", Provider: ProviderClaude, SessionID: ids.IngestSession(),
			CreatedAt: time.Unix(1, 0), MappingVersion: "x/1", Payload: p}
		doc, err := Encode(ev)
		require.NoError(t, err)
		require.NotContains(t, string(doc), "explanation")
		require.NotContains(t, string(doc), "stopReason")
	}
}
