package geministream

import (
	"bytes"

	"github.com/agentwire/agentwire/internal/jsonscan"
)

// A stream-json event is a flat object of strings, a bool and raw
// members: once jsonscan has validated the frame, a scan reads it
// exactly as decoding into event would, without the decoder's second pass
// over every member. Whatever the scan cannot read exactly so (a member
// named twice, an escaped key, a value of another type) it reports, and
// Map decodes with encoding/json.

// eventFields are the members of event, in its order.
var eventFields = []string{
	"type", "timestamp", "session_id", "model", "role", "content", "delta", "tool_name", "tool_id",
	"parameters", "status", "output", "error", "severity", "message", "stats",
}

// scanEvent decodes a frame as json.Unmarshal into event does; ok is false
// for a frame it cannot read exactly so. Raw members are slices of a copy
// of the frame, as decoded ones are copies. info is the validation's
// finding, for the event's raw frame (canonical.NewRawChecked).
func scanEvent(b []byte) (event, jsonscan.Info, bool) {
	info := jsonscan.Check(b)
	if !info.Valid {
		return event{}, info, false
	}
	c := bytes.Clone(b)
	var v [16][]byte
	if !jsonscan.Fields(c, eventFields, v[:]) {
		return event{}, info, false
	}
	var ev event
	for i, p := range [...]*string{0: &ev.Type, 1: &ev.Timestamp, 2: &ev.SessionID, 3: &ev.Model, 4: &ev.Role, 7: &ev.ToolName, 8: &ev.ToolID, 10: &ev.Status, 13: &ev.Severity, 14: &ev.Message} {
		if p == nil {
			continue
		}
		s, ok := jsonscan.String(v[i])
		if !ok {
			return event{}, info, false
		}
		*p = s
	}
	for i, p := range [...]**string{5: &ev.Content, 11: &ev.Output} {
		if p == nil || v[i] == nil || string(v[i]) == "null" {
			continue
		}
		s, ok := jsonscan.String(v[i])
		if !ok {
			return event{}, info, false
		}
		*p = &s
	}
	switch string(v[6]) {
	case "", "null", "false":
	case "true":
		ev.Delta = true
	default:
		return event{}, info, false
	}
	ev.Parameters, ev.Error, ev.Stats = v[9], v[12], v[15]
	return ev, info, true
}
