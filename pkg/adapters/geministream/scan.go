package geministream

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// A stream-json event is a flat object of strings, a bool and raw
// members: once encoding/json has validated the frame, a scan reads it
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
// of the frame, as decoded ones are copies.
func scanEvent(b []byte) (event, bool) {
	if !json.Valid(b) {
		return event{}, false
	}
	c := bytes.Clone(b)
	var v [16][]byte
	if !scanFields(c, eventFields, v[:]) {
		return event{}, false
	}
	var ev event
	for i, p := range [...]*string{0: &ev.Type, 1: &ev.Timestamp, 2: &ev.SessionID, 3: &ev.Model, 4: &ev.Role, 7: &ev.ToolName, 8: &ev.ToolID, 10: &ev.Status, 13: &ev.Severity, 14: &ev.Message} {
		if p == nil {
			continue
		}
		s, ok := scanString(v[i])
		if !ok {
			return event{}, false
		}
		*p = s
	}
	for i, p := range [...]**string{5: &ev.Content, 11: &ev.Output} {
		if p == nil || v[i] == nil || string(v[i]) == "null" {
			continue
		}
		s, ok := scanString(v[i])
		if !ok {
			return event{}, false
		}
		*p = &s
	}
	switch string(v[6]) {
	case "", "null", "false":
	case "true":
		ev.Delta = true
	default:
		return event{}, false
	}
	ev.Parameters, ev.Error, ev.Stats = v[9], v[12], v[15]
	return ev, true
}

// scanFields reads the members of a valid JSON object named names, matched
// as encoding/json matches struct fields (exactly or case-insensitively):
// vals[i] is the value of names[i], nil when absent. It returns false when
// obj is not an object, a key is escaped, or a name matches twice.
func scanFields(obj []byte, names []string, vals [][]byte) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return true
	}
	for i < len(obj) {
		if obj[i] != '"' {
			return false
		}
		end := skipString(obj, i)
		if end < 0 {
			return false
		}
		key := obj[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		start := skipSpace(obj, i+1)
		end = skipValue(obj, start)
		for n, name := range names {
			if bytes.EqualFold(key, []byte(name)) {
				if vals[n] != nil {
					return false
				}
				vals[n] = obj[start:end]
				break
			}
		}
		i = skipSpace(obj, end)
		if i >= len(obj) {
			return false
		}
		switch obj[i] {
		case '}':
			return true
		case ',':
			i = skipSpace(obj, i+1)
		default:
			return false
		}
	}
	return false
}

// scanString reads a JSON string member as encoding/json decodes it into a
// string field: null and absence leave it empty. ok is false for another
// type.
func scanString(v []byte) (string, bool) {
	switch {
	case v == nil || string(v) == "null":
		return "", true
	case len(v) < 2 || v[0] != '"':
		return "", false
	}
	s := v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s), true
	}
	var out string
	if json.Unmarshal(v, &out) != nil {
		return "", false
	}
	return out, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the string that starts at b[i] (a quote),
// -1 when it does not end.
func skipString(b []byte, i int) int {
	for i++; ; {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		q := i + j
		// The quote ends the string unless an odd run of backslashes
		// escapes it.
		k := q - 1
		for k >= i && b[k] == '\\' {
			k--
		}
		if (q-1-k)%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// skipValue returns the end of the valid JSON value that starts at b[i]
// (of something, within b, for invalid JSON).
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		if end := skipString(b, i); end >= 0 {
			return end
		}
		return len(b)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end := skipString(b, i)
				if end < 0 {
					return len(b)
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}
