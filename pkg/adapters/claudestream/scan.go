package claudestream

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/agentwire/agentwire/pkg/adapters/adapter"
)

// Frames, messages and content blocks are flat objects of strings, bools
// and raw members: once encoding/json has validated a frame, a scan reads
// them exactly as decoding would, without decoding (and validating) every
// nested layer again. The scan reads only what it can read exactly as
// encoding/json would; for anything else (a member named twice, an
// escaped key, a value of another type) it says so and the caller decodes
// with encoding/json. claudelog shares it.

// ScanFields reads the members of a valid JSON object named names, matched
// as encoding/json matches struct fields (exactly or case-insensitively):
// vals[i] is the value of names[i], nil when absent. It returns false when
// obj is not an object, a key is escaped, or a name matches twice; the
// caller then decodes with encoding/json.
func ScanFields(obj []byte, names []string, vals [][]byte) bool {
	dup := false
	ok := eachMember(obj, func(key, val []byte) {
		for n, name := range names {
			if bytes.EqualFold(key, []byte(name)) {
				dup = dup || vals[n] != nil
				vals[n] = val
				return
			}
		}
	})
	return ok && !dup
}

// eachMember calls fn with the key (unquoted) and value of each member of
// a valid JSON object, in order. It returns false, having called fn for
// none or some, when obj is not an object or a key is escaped.
func eachMember(obj []byte, fn func(key, val []byte)) bool {
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
		fn(key, obj[start:end])
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

// ScanBool reads a JSON bool member as encoding/json decodes it into a bool
// field: null and absence leave it false. ok is false for another type.
func ScanBool(v []byte) (b, ok bool) {
	switch string(v) {
	case "", "null", "false":
		return false, true
	case "true":
		return true, true
	}
	return false, false
}

// scanElements returns the elements of a valid JSON array; ok is false
// when v is not an array.
func scanElements(v []byte) ([]json.RawMessage, bool) {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '[' {
		return nil, false
	}
	out := []json.RawMessage{}
	i = skipSpace(v, i+1)
	if i < len(v) && v[i] == ']' {
		return out, true
	}
	for i < len(v) {
		end := skipValue(v, i)
		if end <= i {
			return nil, false
		}
		out = append(out, v[i:end])
		i = skipSpace(v, end)
		if i >= len(v) {
			return nil, false
		}
		switch v[i] {
		case ']':
			return out, true
		case ',':
			i = skipSpace(v, i+1)
		default:
			return nil, false
		}
	}
	return nil, false
}

func ScanString(v []byte) (string, bool) {
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

// frameFields are the members of frame, in its order.
var frameFields = []string{
	"type", "subtype", "session_id", "uuid", "timestamp", "parent_tool_use_id", "message",
	"error", "isReplay", "tool_use_result", "event", "request_id", "request", "response",
}

// scanFrame is Frame.Unwrap and the decoding of its message into frame in
// one validation and a scan, for frames whose members have frame's types;
// ok is false for any other, which Map reads the long way. msg is a copy
// of the message: frame's raw members are kept in events and state, so
// they do not share the caller's buffer.
func scanFrame(f adapter.Frame) (msg []byte, dir adapter.Direction, fr frame, ok bool) {
	if !json.Valid(f.Bytes) {
		return nil, "", frame{}, false
	}
	msg, dir = f.Bytes, f.Direction
	if dir == "" {
		dir = adapter.FromAgent
	}
	if trimmed := bytes.TrimSpace(f.Bytes); bytes.HasPrefix(trimmed, []byte(`{"dir"`)) {
		var v [2][]byte
		if !ScanFields(trimmed, []string{"dir", "msg"}, v[:]) || v[0] == nil || v[1] == nil {
			return nil, "", frame{}, false
		}
		s, ok := ScanString(v[0])
		if !ok || (s != string(adapter.FromAgent) && s != string(adapter.FromClient)) {
			return nil, "", frame{}, false
		}
		msg, dir = v[1], adapter.Direction(s)
	}
	msg = bytes.Clone(msg)
	var v [14][]byte
	if !ScanFields(msg, frameFields, v[:]) {
		return nil, "", frame{}, false
	}
	var strs [6]string
	for i, j := range []int{0, 1, 2, 3, 4, 5} {
		if strs[i], ok = ScanString(v[j]); !ok {
			return nil, "", frame{}, false
		}
	}
	replay, ok := ScanBool(v[8])
	if !ok {
		return nil, "", frame{}, false
	}
	requestID, ok := ScanString(v[11])
	if !ok {
		return nil, "", frame{}, false
	}
	fr = frame{
		Type: strs[0], Subtype: strs[1], SessionID: strs[2], UUID: strs[3], Timestamp: strs[4], ParentToolUseID: strs[5],
		Message: v[6], Error: v[7], IsReplay: replay, ToolUseResult: v[9], Event: v[10], RequestID: requestID,
		Request: v[12], Response: v[13],
	}
	return msg, dir, fr, true
}

var messageFields = []string{"id", "model", "role", "content", "stop_reason", "usage"}

// DecodeMessage is json.Unmarshal of a message, read by a scan when it is
// an object of the members' types.
func DecodeMessage(raw json.RawMessage) (Message, error) {
	var v [6][]byte
	if ScanFields(raw, messageFields, v[:]) {
		var m Message
		var ok1, ok2, ok3 bool
		m.ID, ok1 = ScanString(v[0])
		m.Model, ok2 = ScanString(v[1])
		m.Role, ok3 = ScanString(v[2])
		stop, ok4 := ScanString(v[4])
		if ok1 && ok2 && ok3 && ok4 {
			if v[4] != nil && string(v[4]) != "null" {
				m.StopReason = &stop
			}
			m.Content, m.Usage = v[3], v[5]
			return m, nil
		}
	}
	var m Message
	err := json.Unmarshal(raw, &m)
	return m, err
}

var blockFields = []string{"type", "text", "thinking", "id", "name", "input", "tool_use_id", "content", "is_error", "server_name"}

// scanBlock reads a content block as json.Unmarshal does, when it is an
// object of the members' types.
func scanBlock(raw []byte) (Block, bool) {
	var v [10][]byte
	if !ScanFields(raw, blockFields, v[:]) {
		return Block{}, false
	}
	var s [7]string
	for i, j := range []int{0, 1, 2, 3, 4, 6, 9} {
		var ok bool
		if s[i], ok = ScanString(v[j]); !ok {
			return Block{}, false
		}
	}
	isErr, ok := ScanBool(v[8])
	if !ok {
		return Block{}, false
	}
	return Block{
		Type: s[0], Text: s[1], Thinking: s[2], ID: s[3], Name: s[4], Input: v[5], ToolUseID: s[5],
		Content: v[7], IsError: isErr, ServerName: s[6],
	}, true
}

// scanStrings reads the string members names of a valid JSON object; ok is
// false when ScanFields cannot read obj or a member is not a string.
func scanStrings(obj []byte, names ...string) ([]string, bool) {
	v := make([][]byte, len(names))
	if !ScanFields(obj, names, v) {
		return nil, false
	}
	out := make([]string, len(names))
	for i := range v {
		var ok bool
		if out[i], ok = ScanString(v[i]); !ok {
			return nil, false
		}
	}
	return out, true
}

// scanHeader is header's request or response, decoded by a scan when the
// member is an object of header's types; ok is false otherwise.
func (fr frame) scanHeader(h *header) bool {
	switch {
	case fr.Type == "control_request" && len(fr.Request) > 0:
		s, ok := scanStrings(fr.Request, "subtype")
		if !ok {
			return false
		}
		h.Request = &struct {
			Subtype string `json:"subtype"`
		}{s[0]}
	case fr.Type == "control_response" && len(fr.Response) > 0:
		var v [2][]byte
		if !ScanFields(fr.Response, []string{"subtype", "response"}, v[:]) {
			return false
		}
		sub, ok := ScanString(v[0])
		if !ok {
			return false
		}
		h.Response = &struct {
			Subtype  string `json:"subtype"`
			Response *struct {
				Behavior string `json:"behavior"`
			} `json:"response"`
		}{Subtype: sub}
		if v[1] != nil && string(v[1]) != "null" {
			b, ok := scanStrings(v[1], "behavior")
			if !ok {
				return false
			}
			h.Response.Response = &struct {
				Behavior string `json:"behavior"`
			}{b[0]}
		}
	}
	return true
}

// decodeControlResponse is json.Unmarshal into controlResponse, by a scan
// when the response is an object of its types.
func decodeControlResponse(raw json.RawMessage) (controlResponse, error) {
	var v [4][]byte
	if ScanFields(raw, []string{"subtype", "request_id", "error", "response"}, v[:]) {
		var r controlResponse
		var ok1, ok2, ok3 bool
		r.Subtype, ok1 = ScanString(v[0])
		r.RequestID, ok2 = ScanString(v[1])
		r.Error, ok3 = ScanString(v[2])
		if ok1 && ok2 && ok3 {
			r.Response = v[3]
			return r, nil
		}
	}
	var r controlResponse
	err := json.Unmarshal(raw, &r)
	return r, err
}
