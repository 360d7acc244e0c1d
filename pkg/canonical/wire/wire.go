package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentwire/agentwire/pkg/canonical"
)

// Content types.
const (
	// DataContentType is the content type of the data: the event document.
	DataContentType = "application/json"
	// StructuredContentType is the content type of a structured-mode event.
	StructuredContentType = "application/cloudevents+json"
	// SpecVersion is the CloudEvents version written.
	SpecVersion = "1.0"
)

// NATS header names. The binding prefixes attributes with "ce-" and maps
// datacontenttype to "content-type"; names are lower case because the
// binding looks them up by exact key.
const (
	headerPrefix      = "ce-"
	headerContentType = "content-type"
	headerMsgID       = "Nats-Msg-Id"
)

// ErrMismatch is wrapped when a message's attributes disagree with its data.
var ErrMismatch = errors.New("cloudevent attributes disagree with the event")

// attribute is one context attribute or extension and its value.
type attribute struct{ name, value string }

// Source returns the CloudEvents source of e: the tenant, provider and
// session it belongs to.
func Source(e canonical.Event) string {
	return "/tenants/" + e.Tenant + "/providers/" + string(e.Provider) + "/sessions/" + e.SessionID
}

// attributes lists e's attributes and extensions in a fixed order, leaving
// out empty optional ones.
func attributes(e canonical.Event) []attribute {
	all := []attribute{
		{"specversion", SpecVersion},
		{"id", e.EventID},
		{"type", string(e.Type())},
		{"source", Source(e)},
		{"subject", e.ThreadID},
		{"time", e.CreatedAt.UTC().Format(time.RFC3339Nano)},
		{"datacontenttype", DataContentType},
		{"dataschema", canonical.SchemaURI(e.Type())},
		{"tenant", e.Tenant},
		{"provider", string(e.Provider)},
		{"sessionid", e.SessionID},
		{"threadid", e.ThreadID},
		{"turnid", e.TurnID},
		{"itemid", e.ItemID},
		{"requestid", e.RequestID},
		{"mappingversion", e.MappingVersion},
	}
	out := all[:0]
	for _, a := range all {
		if a.value != "" {
			out = append(out, a)
		}
	}
	return out
}

// ToNATS encodes e as a NATS message in binary content mode, addressed to
// its subject (`runtime.<provider>.<type>`) and carrying Nats-Msg-Id = the
// event id, so JetStream drops a re-published event. It validates e first.
func ToNATS(e canonical.Event) (*nats.Msg, error) {
	if err := canonical.Validate(e); err != nil {
		return nil, fmt.Errorf("encode cloudevent: %w", err)
	}
	return ToNATSValidated(e)
}

// ToNATSValidated is ToNATS for an event already known to be valid: one
// an adapter emitted, which the adapters' conformance suites and fuzz
// targets hold to canonical.Validate for any input. It is the
// normalizer's path, where validating every event again cost as much as
// encoding it; consumers that decode with FromNATS still validate.
func ToNATSValidated(e canonical.Event) (*nats.Msg, error) {
	body, err := canonical.Encode(e)
	if err != nil {
		return nil, fmt.Errorf("encode cloudevent: %w", err)
	}
	attrs := attributes(e)
	// Sized up front, and every value in one backing array: the headers
	// were a third of the encoding's allocations.
	h := make(nats.Header, len(attrs)+1)
	vals := make([]string, len(attrs)+1)
	for i, a := range attrs {
		vals[i] = a.value
		h[headerKey(a.name)] = vals[i : i+1 : i+1]
	}
	vals[len(attrs)] = e.EventID
	h[headerMsgID] = vals[len(attrs):]
	return &nats.Msg{Subject: e.Subject(), Data: body, Header: h}, nil
}

// headerKeys caches each attribute's header name, so that encoding an
// event does not concatenate a dozen strings.
var headerKeys sync.Map // attribute name -> header name

func headerKey(name string) string {
	if name == "datacontenttype" {
		return headerContentType
	}
	if k, ok := headerKeys.Load(name); ok {
		return k.(string)
	}
	k := headerPrefix + name
	headerKeys.Store(name, k)
	return k
}

// FromNATS decodes a NATS message written by ToNATS, or any CloudEvent in
// binary or structured mode whose data is a canonical event document.
func FromNATS(msg *nats.Msg) (canonical.Event, error) { return fromNATS(msg, canonical.Decode) }

// FromNATSEnvelope is FromNATS without the raw frame (canonical.DecodeEnvelope):
// for consumers that never read it.
func FromNATSEnvelope(msg *nats.Msg) (canonical.Event, error) {
	return fromNATS(msg, canonical.DecodeEnvelope)
}

func fromNATS(msg *nats.Msg, decode func([]byte) (canonical.Event, error)) (canonical.Event, error) {
	if msg.Header.Get(headerPrefix+"specversion") == "" {
		return unmarshalStructured(msg.Data, decode)
	}
	e, err := decode(msg.Data)
	if err != nil {
		return canonical.Event{}, fmt.Errorf("decode cloudevent data: %w", err)
	}
	got := func(name string) string {
		if name == "datacontenttype" {
			return msg.Header.Get(headerContentType)
		}
		return msg.Header.Get(headerPrefix + name)
	}
	if err := checkAttributes(e, got); err != nil {
		return canonical.Event{}, err
	}
	return e, nil
}

// checkAttributes compares the attributes a message carries (got) with
// those e implies. Extensions may be absent (a router may strip them), but
// never different; the required attributes must be present and equal.
func checkAttributes(e canonical.Event, got func(name string) string) error {
	if v := got("specversion"); v != SpecVersion {
		return fmt.Errorf("decode cloudevent: specversion %q: %w", v, ErrMismatch)
	}
	for _, a := range attributes(e) {
		v := got(a.name)
		switch a.name {
		case "time":
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil || !t.Equal(e.CreatedAt) {
				return fmt.Errorf("decode cloudevent: time %q, event says %s: %w", v, a.value, ErrMismatch)
			}
			continue
		case "id", "type", "source":
		default:
			if v == "" {
				continue
			}
		}
		if v != a.value {
			return fmt.Errorf("decode cloudevent: %s %q, event says %q: %w", a.name, v, a.value, ErrMismatch)
		}
	}
	return nil
}

// MarshalStructured encodes e in the CloudEvents JSON event format: the
// attributes and extensions as members, in a fixed order, and the event
// document as `data`. The output is deterministic and ends without a newline.
func MarshalStructured(e canonical.Event) ([]byte, error) {
	if err := canonical.Validate(e); err != nil {
		return nil, fmt.Errorf("encode cloudevent: %w", err)
	}
	data, err := canonical.Encode(e)
	if err != nil {
		return nil, fmt.Errorf("encode cloudevent: %w", err)
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, a := range attributes(e) {
		// Encode appends a newline after each value, which JSON allows
		// between tokens; the output stays compact for a reader and
		// deterministic for us.
		if err := enc.Encode(a.name); err != nil {
			return nil, fmt.Errorf("encode cloudevent: %w", err)
		}
		buf.Truncate(buf.Len() - 1)
		buf.WriteByte(':')
		if err := enc.Encode(a.value); err != nil {
			return nil, fmt.Errorf("encode cloudevent: %w", err)
		}
		buf.Truncate(buf.Len() - 1)
		buf.WriteByte(',')
	}
	buf.WriteString(`"data":`)
	buf.Write(data)
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalStructured decodes a CloudEvent in the JSON event format whose
// data is a canonical event document.
func UnmarshalStructured(b []byte) (canonical.Event, error) {
	return unmarshalStructured(b, canonical.Decode)
}

func unmarshalStructured(b []byte, decode func([]byte) (canonical.Event, error)) (canonical.Event, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return canonical.Event{}, fmt.Errorf("decode structured cloudevent: %w", err)
	}
	data, ok := members["data"]
	if !ok {
		if _, ok := members["data_base64"]; ok {
			return canonical.Event{}, errors.New("decode structured cloudevent: data_base64 is not supported; data must be the event document")
		}
		return canonical.Event{}, errors.New("decode structured cloudevent: data is required")
	}
	e, err := decode(data)
	if err != nil {
		return canonical.Event{}, fmt.Errorf("decode cloudevent data: %w", err)
	}
	got := func(name string) string {
		var s string
		if raw, ok := members[name]; ok && json.Unmarshal(raw, &s) != nil {
			return "\x00not a string"
		}
		return s
	}
	if err := checkAttributes(e, got); err != nil {
		return canonical.Event{}, err
	}
	return e, nil
}
