package claudestream

import (
	"bytes"
	"encoding/json"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
)

// Frames, messages and content blocks are flat objects of strings, bools
// and raw members: once jsonscan has validated a frame, a scan reads
// them exactly as decoding would, without decoding (and validating) every
// nested layer again. The scan reads only what it can read exactly as
// encoding/json would; for anything else (a member named twice, an
// escaped key, a value of another type) it says so and the caller decodes
// with encoding/json. claudelog reads its lines the same way.

// frameFields are the members of frame, in its order.
var frameFields = []string{
	"type", "subtype", "session_id", "uuid", "parent_tool_use_id", "message",
	"error", "isReplay", "tool_use_result", "event", "request_id", "request", "response",
}

// scanFrame is Frame.Unwrap and the decoding of its message into frame in
// one validation (check, the caller's jsonscan.Check of the frame, which
// its raw copy reuses) and a scan, for frames whose members have frame's
// types; ok is false for any other, which Map reads the long way. msg is a
// copy of the message: frame's raw members are kept in events and state,
// so they do not share the caller's buffer.
func scanFrame(f adapter.Frame, check jsonscan.Info) (msg []byte, dir adapter.Direction, fr frame, ok bool) {
	if !check.Valid {
		return nil, "", frame{}, false
	}
	msg, dir = f.Bytes, f.Direction
	if dir == "" {
		dir = adapter.FromAgent
	}
	if trimmed := bytes.TrimSpace(f.Bytes); bytes.HasPrefix(trimmed, []byte(`{"dir"`)) {
		var v [2][]byte
		if !jsonscan.Fields(trimmed, []string{"dir", "msg"}, v[:]) || v[0] == nil || v[1] == nil {
			return nil, "", frame{}, false
		}
		s, ok := jsonscan.String(v[0])
		if !ok || (s != string(adapter.FromAgent) && s != string(adapter.FromClient)) {
			return nil, "", frame{}, false
		}
		msg, dir = v[1], adapter.Direction(s)
	}
	msg = bytes.Clone(msg)
	var v [13][]byte
	if !jsonscan.Fields(msg, frameFields, v[:]) {
		return nil, "", frame{}, false
	}
	var strs [5]string
	for i, j := range []int{0, 1, 2, 3, 4} {
		if strs[i], ok = jsonscan.String(v[j]); !ok {
			return nil, "", frame{}, false
		}
	}
	replay, ok := jsonscan.Bool(v[7])
	if !ok {
		return nil, "", frame{}, false
	}
	requestID, ok := jsonscan.String(v[10])
	if !ok {
		return nil, "", frame{}, false
	}
	fr = frame{
		Type: strs[0], Subtype: strs[1], SessionID: strs[2], UUID: strs[3], ParentToolUseID: strs[4],
		Message: v[5], Error: v[6], IsReplay: replay, ToolUseResult: v[8], Event: v[9], RequestID: requestID,
		Request: v[11], Response: v[12],
	}
	return msg, dir, fr, true
}

var messageFields = []string{"id", "model", "role", "content", "stop_reason", "usage"}

// DecodeMessage is json.Unmarshal of a message, read by a scan when it is
// an object of the members' types.
func DecodeMessage(raw json.RawMessage) (Message, error) {
	var v [6][]byte
	if jsonscan.Fields(raw, messageFields, v[:]) {
		var m Message
		var ok1, ok2, ok3 bool
		m.ID, ok1 = jsonscan.String(v[0])
		m.Model, ok2 = jsonscan.String(v[1])
		m.Role, ok3 = jsonscan.String(v[2])
		stop, ok4 := jsonscan.String(v[4])
		if ok1 && ok2 && ok3 && ok4 {
			if v[4] != nil && string(v[4]) != "null" {
				m.StopReason = &stop
			}
			m.Content, m.Usage = v[3], v[5]
			return m, nil
		}
	}
	var m Message
	err := jsonscan.Unmarshal(raw, &m)
	return m, err
}

var blockFields = []string{"type", "text", "thinking", "id", "name", "input", "tool_use_id", "content", "is_error", "server_name"}

// scanBlock reads a content block as json.Unmarshal does, when it is an
// object of the members' types.
func scanBlock(raw []byte) (Block, bool) {
	var v [10][]byte
	if !jsonscan.Fields(raw, blockFields, v[:]) {
		return Block{}, false
	}
	var s [7]string
	for i, j := range []int{0, 1, 2, 3, 4, 6, 9} {
		var ok bool
		if s[i], ok = jsonscan.String(v[j]); !ok {
			return Block{}, false
		}
	}
	isErr, ok := jsonscan.Bool(v[8])
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
	if !jsonscan.Fields(obj, names, v) {
		return nil, false
	}
	out := make([]string, len(names))
	for i := range v {
		var ok bool
		if out[i], ok = jsonscan.String(v[i]); !ok {
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
		if !jsonscan.Fields(fr.Response, []string{"subtype", "response"}, v[:]) {
			return false
		}
		sub, ok := jsonscan.String(v[0])
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
	if jsonscan.Fields(raw, []string{"subtype", "request_id", "error", "response"}, v[:]) {
		var r controlResponse
		var ok1, ok2, ok3 bool
		r.Subtype, ok1 = jsonscan.String(v[0])
		r.RequestID, ok2 = jsonscan.String(v[1])
		r.Error, ok3 = jsonscan.String(v[2])
		if ok1 && ok2 && ok3 {
			r.Response = v[3]
			return r, nil
		}
	}
	var r controlResponse
	err := jsonscan.Unmarshal(raw, &r)
	return r, err
}
