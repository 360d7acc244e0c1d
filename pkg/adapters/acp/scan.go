package acp

import "github.com/agentwire/agentwire/internal/jsonscan"

// The routing members of a frame (params.sessionId, params.update and its
// sessionUpdate tag) are read by a scan of the validated frame (jsonscan),
// not by decoding it: a Claude Code
// available_commands_update is 10 KB whose tag is its first member. The
// scan reads only what it can read exactly as encoding/json would; for
// anything else (a member named twice, an escaped key, a value of another
// type) it reports !ok and the caller decodes with encoding/json.

// members finds the values of the members of a valid JSON object named a
// and b, matched as encoding/json matches struct fields (exactly or
// case-insensitively). ok is false when obj is not an object, a key is
// escaped, or a name matches twice.
func members(obj []byte, a, b string) (va, vb []byte, ok bool) {
	var vals [2][]byte
	ok = jsonscan.Fields(obj, []string{a, b}, vals[:])
	return vals[0], vals[1], ok
}
