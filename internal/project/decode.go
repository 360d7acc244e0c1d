package project

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/canonical"
	"github.com/agentwire/agentwire/pkg/canonical/wire"
)

// envelope names the members of an event document the projector reads, in
// the order of the indexes below. raw is not among them: the event log
// keeps the document as it came (Postgres checks that it is JSON when it
// stores it as jsonb), and no projection reads the provider's frame.
// Decoding and validating raw was most of what decoding an event cost the
// projector, on a machine where the projector and Postgres share the CPU.
var envelope = []string{
	"eventId", "tenant", "provider", "sessionId", "createdAt", "threadId", "turnId", "itemId", "requestId",
	"mappingVersion", "type", "payload", "providerRefs",
}

const (
	fEventID = iota
	fTenant
	fProvider
	fSessionID
	fCreatedAt
	fThreadID
	fTurnID
	fItemID
	fRequestID
	fMappingVersion
	fType
	fPayload
	fProviderRefs
	numFields
)

// decodeEvent decodes a RUNTIME message into the event the projector folds:
// the envelope and the typed payload, validated, without raw. Messages it
// cannot read that way (structured mode, escaped member names, a member
// named twice) go through wire.FromNATS, which reads everything.
func decodeEvent(subject string, h nats.Header, data []byte) (canonical.Event, error) {
	if h.Get("ce-specversion") == "" {
		return wire.FromNATS(&nats.Msg{Subject: subject, Header: h, Data: data})
	}
	var vals [numFields][]byte
	if !jsonscan.Fields(data, envelope, vals[:]) {
		return wire.FromNATS(&nats.Msg{Subject: subject, Header: h, Data: data})
	}
	var e canonical.Event
	strs := []struct {
		dst *string
		i   int
	}{
		{&e.EventID, fEventID}, {&e.Tenant, fTenant}, {&e.SessionID, fSessionID}, {&e.ThreadID, fThreadID},
		{&e.TurnID, fTurnID}, {&e.ItemID, fItemID}, {&e.RequestID, fRequestID}, {&e.MappingVersion, fMappingVersion},
	}
	for _, s := range strs {
		v, ok := jsonscan.String(vals[s.i])
		if !ok {
			return e, fmt.Errorf("decode event: %s is not a string", envelope[s.i])
		}
		*s.dst = v
	}
	provider, ok := jsonscan.String(vals[fProvider])
	if !ok {
		return e, fmt.Errorf("decode event: provider is not a string")
	}
	e.Provider = canonical.Provider(provider)
	at, ok := jsonscan.String(vals[fCreatedAt])
	if !ok {
		return e, fmt.Errorf("decode event: createdAt is not a string")
	}
	if at != "" {
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			return e, fmt.Errorf("decode event: createdAt: %w", err)
		}
		e.CreatedAt = t
	}
	if vals[fProviderRefs] != nil {
		if err := jsonscan.Unmarshal(vals[fProviderRefs], &e.ProviderRefs); err != nil {
			return e, fmt.Errorf("decode event: providerRefs: %w", err)
		}
	}
	kind, ok := jsonscan.String(vals[fType])
	if !ok || kind == "" {
		return e, fmt.Errorf("decode event: type is missing or not a string")
	}
	p, err := canonical.NewPayload(canonical.Kind(kind))
	if err != nil {
		return e, fmt.Errorf("decode event: %w", err)
	}
	if v := vals[fPayload]; v == nil || string(v) == "null" {
		return e, fmt.Errorf("decode event: payload is required")
	}
	if err := jsonscan.Unmarshal(vals[fPayload], p); err != nil {
		return e, fmt.Errorf("decode %s payload: %w", kind, err)
	}
	e.Payload = p
	if err := canonical.Validate(e); err != nil {
		return e, fmt.Errorf("invalid event: %w", err)
	}
	// The dispatcher routes by these headers and the checkpoints are kept
	// by the document's values: they must agree, or a session's events
	// could be applied out of order.
	if h.Get("ce-tenant") != e.Tenant || h.Get("ce-sessionid") != e.SessionID || h.Get("ce-id") != e.EventID {
		return e, fmt.Errorf("decode event: %w", wire.ErrMismatch)
	}
	return e, nil
}
