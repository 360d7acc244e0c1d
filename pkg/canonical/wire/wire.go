package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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

// attributeSpecs are the attributes and extensions in their fixed order:
// each one's value for an event and, for the values that cost a string to
// build, a test that a received value is it without building it (decoding
// checks every message's attributes).
var attributeSpecs = [...]struct {
	name  string
	value func(*canonical.Event) string
	is    func(*canonical.Event, string) bool // nil: v == value(e)
	// required: present on every message (CloudEvents' required
	// attributes, and time); the others a router may strip.
	required bool
}{
	{"specversion", func(*canonical.Event) string { return SpecVersion }, nil, true},
	{"id", func(e *canonical.Event) string { return e.EventID }, nil, true},
	{"type", func(e *canonical.Event) string { return string(e.Type()) }, nil, true},
	{"source", func(e *canonical.Event) string { return Source(*e) }, isSource, true},
	{"subject", func(e *canonical.Event) string { return e.ThreadID }, nil, false},
	{"time", func(e *canonical.Event) string { return e.CreatedAt.UTC().Format(time.RFC3339Nano) }, isTime, true},
	{"datacontenttype", func(*canonical.Event) string { return DataContentType }, nil, false},
	{"dataschema", func(e *canonical.Event) string { return canonical.SchemaURI(e.Type()) }, isSchema, false},
	{"tenant", func(e *canonical.Event) string { return e.Tenant }, nil, false},
	{"provider", func(e *canonical.Event) string { return string(e.Provider) }, nil, false},
	{"sessionid", func(e *canonical.Event) string { return e.SessionID }, nil, false},
	{"threadid", func(e *canonical.Event) string { return e.ThreadID }, nil, false},
	{"turnid", func(e *canonical.Event) string { return e.TurnID }, nil, false},
	{"itemid", func(e *canonical.Event) string { return e.ItemID }, nil, false},
	{"requestid", func(e *canonical.Event) string { return e.RequestID }, nil, false},
	{"mappingversion", func(e *canonical.Event) string { return e.MappingVersion }, nil, false},
}

// attributes lists e's attributes and extensions in a fixed order, leaving
// out empty optional ones.
func attributes(e canonical.Event) []attribute {
	out := make([]attribute, 0, len(attributeSpecs))
	for _, s := range attributeSpecs {
		if v := s.value(&e); v != "" {
			out = append(out, attribute{s.name, v})
		}
	}
	return out
}

func isSource(e *canonical.Event, v string) bool {
	for _, part := range [...]string{"/tenants/", e.Tenant, "/providers/", string(e.Provider), "/sessions/", e.SessionID} {
		var ok bool
		if v, ok = strings.CutPrefix(v, part); !ok {
			return false
		}
	}
	return v == ""
}

// isTime accepts any RFC 3339 spelling of the event's instant.
func isTime(e *canonical.Event, v string) bool {
	t, err := time.Parse(time.RFC3339Nano, v)
	return err == nil && t.Equal(e.CreatedAt)
}

func isSchema(e *canonical.Event, v string) bool {
	rest, ok := strings.CutPrefix(v, canonical.SchemaBaseURI)
	kind, json := strings.CutSuffix(rest, ".json")
	return ok && json && kind == string(e.Type())
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

// headerKeys are the attributes' header names, built once from
// attributeSpecs: encoding and decoding look one up for every attribute of
// every event.
var headerKeys = func() map[string]string {
	m := make(map[string]string, len(attributeSpecs))
	for _, s := range attributeSpecs {
		m[s.name] = headerPrefix + s.name
	}
	m["datacontenttype"] = headerContentType
	return m
}()

func headerKey(name string) string { return headerKeys[name] }

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
	got := func(i int) string { return msg.Header.Get(specHeaders[i]) }
	if err := checkAttributes(e, got); err != nil {
		return canonical.Event{}, err
	}
	return e, nil
}

// specHeaders are the attributes' header names, in attributeSpecs' order:
// looked up by name, they cost a map lookup more per attribute of every
// event decoded.
var specHeaders = func() (h [len(attributeSpecs)]string) {
	for i, s := range attributeSpecs {
		h[i] = headerKey(s.name)
	}
	return h
}()

// checkAttributes compares the attributes a message carries (got, by
// index in attributeSpecs) with those e implies. Extensions may be absent
// (a router may strip them), but never different; the required attributes
// (and time) must be present and equal.
func checkAttributes(e canonical.Event, got func(i int) string) error {
	if v := got(0); v != SpecVersion { // attributeSpecs[0] is specversion
		return fmt.Errorf("decode cloudevent: specversion %q: %w", v, ErrMismatch)
	}
	for i := 1; i < len(attributeSpecs); i++ {
		s := &attributeSpecs[i]
		v, required := got(i), s.required
		if s.is != nil {
			if (v != "" || required) && !s.is(&e, v) {
				return fmt.Errorf("decode cloudevent: %s %q, event says %q: %w", s.name, v, s.value(&e), ErrMismatch)
			}
			continue
		}
		want := s.value(&e)
		if want == "" || (v == "" && !required) {
			continue
		}
		if v != want {
			return fmt.Errorf("decode cloudevent: %s %q, event says %q: %w", s.name, v, want, ErrMismatch)
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
	got := func(i int) string {
		var s string
		if raw, ok := members[attributeSpecs[i].name]; ok && json.Unmarshal(raw, &s) != nil {
			return "\x00not a string"
		}
		return s
	}
	if err := checkAttributes(e, got); err != nil {
		return canonical.Event{}, err
	}
	return e, nil
}
