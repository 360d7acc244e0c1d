package canonical

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/agentwire/agentwire/internal/jsonscan"
)

// RawEncoding says how Raw.Payload holds the frame's bytes.
type RawEncoding string

// Raw encodings.
const (
	// RawJSON: Payload is the frame itself, a compact JSON value.
	RawJSON RawEncoding = ""
	// RawText: Payload is a JSON string holding the frame, valid UTF-8 that
	// is not compact JSON (broken JSON, a stderr line, JSON with spacing).
	RawText RawEncoding = "text"
	// RawBase64: Payload is a JSON string holding the frame in standard
	// base64, for bytes that are not valid UTF-8.
	RawBase64 RawEncoding = "base64"
	// RawRef: the frame was too large to travel inside the event; Payload
	// is a RawRef saying where the pipeline keeps it.
	RawRef RawEncoding = "ref"
)

// RawReference locates a frame kept outside its event: in a JetStream
// stream by sequence, or in an object store by name. Bytes and SHA256
// identify it.
type RawReference struct {
	// Stream and Seq locate a frame stored as a stream message.
	Stream string `json:"stream,omitempty"`
	Seq    uint64 `json:"seq,omitempty"`
	// Bucket and Object locate a frame stored in an object store.
	Bucket string `json:"bucket,omitempty"`
	Object string `json:"object,omitempty"`
	// Bytes is the frame's length.
	Bytes int `json:"bytes"`
	// SHA256 is the hex SHA-256 of the frame.
	SHA256 string `json:"sha256"`
}

// ErrRawReferenced is returned by Raw.Frame when the frame is kept
// elsewhere (RawRef); Raw.Reference says where.
var ErrRawReferenced = errors.New("raw frame is stored by reference")

// Referenced returns a copy of r whose frame is replaced by a reference.
func (r Raw) Referenced(ref RawReference) Raw {
	b, _ := json.Marshal(ref) //nolint:errchkjson // a struct of strings and numbers always encodes
	r.Payload, r.Encoding = b, RawRef
	return r
}

// Reference returns where a RawRef frame is kept.
func (r Raw) Reference() (RawReference, error) {
	var ref RawReference
	if r.Encoding != RawRef {
		return ref, fmt.Errorf("raw frame is held inline (encoding %q)", r.Encoding)
	}
	if err := json.Unmarshal(r.Payload, &ref); err != nil {
		return ref, fmt.Errorf("raw reference: %w", err)
	}
	return ref, nil
}

// RawEncodings returns every RawEncoding.
func RawEncodings() []RawEncoding { return []RawEncoding{RawJSON, RawText, RawBase64, RawRef} }

// Valid reports whether e is one of RawEncodings.
func (e RawEncoding) Valid() bool { return isOneOf(e, RawEncodings()) }

// enumValues leaves out RawJSON: it is spelled by omitting the member.
func (RawEncoding) enumValues() []string {
	return enumStrings([]RawEncoding{RawText, RawBase64, RawRef})
}

// Raw is the provider frame an event was mapped from, kept so that no
// provider detail is ever lost. Frame returns the frame byte for byte.
type Raw struct {
	// Source names the provider channel, such as "codex.app-server.notification"
	// or "claude.sdk.message" (see the adapters' documentation).
	Source string `json:"source"`
	// Method is the JSON-RPC method, for JSON-RPC dialects.
	Method string `json:"method,omitempty"`
	// MessageType is the frame's type tag (`type`, or `type:subtype`).
	MessageType string `json:"messageType,omitempty"`
	// Payload holds the frame as Encoding says.
	Payload json.RawMessage `json:"payload"`
	// Encoding says how Payload holds the frame; omitted for JSON.
	Encoding RawEncoding `json:"encoding,omitempty"`
}

// NewRaw keeps frame in the most readable encoding that still gives it back
// byte for byte: as JSON when it is compact JSON in valid UTF-8, as a string
// when it is other UTF-8 text, and as base64 otherwise. JSON with spacing is
// kept as text because re-encoding would change its bytes, and JSON nested
// deeper than MaxRawJSONDepth too, because decoders (encoding/json stops at
// 10000 levels) could not read the event that embeds it. So is the frame
// `null`: as JSON it would read as no payload at all.
func NewRaw(source, method, messageType string, frame []byte) Raw {
	r := Raw{Source: source, Method: method, MessageType: messageType}
	utf8OK := utf8.Valid(frame)
	if utf8OK {
		if info := jsonscan.Check(frame); inlineJSON(frame, info) {
			r.Payload = bytes.Clone(frame)
			return r
		}
	}
	switch {
	case utf8OK:
		r.Payload = mustString(string(frame))
		r.Encoding = RawText
	default:
		r.Payload = mustString(base64.StdEncoding.EncodeToString(frame))
		r.Encoding = RawBase64
	}
	return r
}

// NewRawChecked is NewRaw for a frame its caller has already run through
// jsonscan.Check (an adapter validating the frame it maps), given what
// that check found: the frame is not scanned a second time, which was a
// sixth of the mapping time of the adapters that validate. UTF-8 is still
// checked; a frame that is not valid JSON goes the NewRaw way.
func NewRawChecked(source, method, messageType string, frame []byte, info jsonscan.Info) Raw {
	if inlineJSON(frame, info) && utf8.Valid(frame) {
		return Raw{Source: source, Method: method, MessageType: messageType, Payload: bytes.Clone(frame)}
	}
	return NewRaw(source, method, messageType, frame)
}

// inlineJSON reports whether a frame that jsonscan.Check found to be info
// is kept as JSON (NewRaw).
func inlineJSON(frame []byte, info jsonscan.Info) bool {
	return info.Valid && info.Compact && info.Depth <= MaxRawJSONDepth && string(frame) != "null"
}

// checkPayload is Frame's check of Payload without the copy Frame returns:
// JSON payloads are checked as JSON by Validate's field rules already.
func (r Raw) checkPayload() error {
	if r.Encoding == RawJSON {
		return nil
	}
	_, err := r.Frame()
	return err
}

// Frame returns the frame's bytes exactly as they were received.
func (r Raw) Frame() ([]byte, error) {
	switch r.Encoding {
	case RawJSON:
		return bytes.Clone(r.Payload), nil
	case RawText, RawBase64:
		var s string
		if err := json.Unmarshal(r.Payload, &s); err != nil {
			return nil, fmt.Errorf("raw frame: payload of encoding %q must be a JSON string: %w", r.Encoding, err)
		}
		if r.Encoding == RawText {
			return []byte(s), nil
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("raw frame: %w", err)
		}
		return b, nil
	case RawRef:
		return nil, ErrRawReferenced
	default:
		return nil, &FieldError{Field: "raw.encoding", Rule: "must be one of text, base64 or absent", Value: string(r.Encoding)}
	}
}

// MaxJSONDepth is the deepest a JSON value in an event may nest: a
// payload's JSON member (Validate) or a frame kept inline (NewRaw). The
// event around the value adds a few levels, and decoders stop not far
// above (encoding/json at 10000, Postgres's jsonb where its stack ends),
// so an event with a deeper value could not be encoded or stored. No
// provider nests anywhere near this deep; a frame that does is broken or
// hostile, and adapters map it to a runtime.error.
const MaxJSONDepth = 512

// MaxRawJSONDepth is the deepest nesting of a frame kept as inline JSON.
const MaxRawJSONDepth = MaxJSONDepth

// mustString encodes s as a JSON string without HTML escaping; encoding a
// Go string cannot fail.
func mustString(s string) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// normalize brings a decoded Payload to the form NewRaw writes, so that
// documents that differ only in JSON spelling decode to equal events: JSON
// frames are compacted (NewRaw keeps only compact ones, so a pretty-printed
// document still means the compact frame), and the strings of text and
// base64 frames are re-spelled without HTML escapes (tools that re-encode
// with encoding/json's defaults write "\u003c" for "<").
func (r *Raw) normalize() error {
	if len(r.Payload) == 0 {
		return nil
	}
	switch r.Encoding {
	case RawJSON:
		if info := jsonscan.Check(r.Payload); info.Valid && info.Compact {
			return nil // as NewRaw wrote it: nothing to compact
		}
		var c bytes.Buffer
		if err := json.Compact(&c, r.Payload); err != nil {
			return err
		}
		r.Payload = c.Bytes()
	case RawText, RawBase64:
		var s string
		if err := json.Unmarshal(r.Payload, &s); err == nil {
			r.Payload = mustString(s)
		}
	case RawRef:
		var c bytes.Buffer
		if err := json.Compact(&c, r.Payload); err != nil {
			return err
		}
		r.Payload = c.Bytes()
	}
	return nil
}
