package acp

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The routing members of a frame (params.sessionId, params.update and its
// sessionUpdate tag) are read by a scan of JSON that encoding/json has
// already validated, not by decoding it again: a Claude Code
// available_commands_update is 10 KB whose tag is its first member. The
// scan reads only what it can read exactly as encoding/json would; for
// anything else (a member named twice, an escaped key, a value of another
// type) it reports !ok and the caller decodes with encoding/json.

// members finds the values of the members of a valid JSON object named a
// and b, matched as encoding/json matches struct fields (exactly or
// case-insensitively). ok is false when obj is not an object, a key is
// escaped, or a name matches twice.
func members(obj []byte, a, b string) (va, vb []byte, ok bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, nil, false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil, nil, true
	}
	for i < len(obj) {
		if obj[i] != '"' {
			return nil, nil, false
		}
		end := skipString(obj, i)
		key := obj[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return nil, nil, false
		}
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return nil, nil, false
		}
		start := skipSpace(obj, i+1)
		end = skipValue(obj, start)
		val := obj[start:end]
		switch {
		case bytes.EqualFold(key, []byte(a)):
			if va != nil {
				return nil, nil, false
			}
			va = val
		case bytes.EqualFold(key, []byte(b)):
			if vb != nil {
				return nil, nil, false
			}
			vb = val
		}
		i = skipSpace(obj, end)
		if i >= len(obj) {
			return nil, nil, false
		}
		switch obj[i] {
		case '}':
			return va, vb, true
		case ',':
			i = skipSpace(obj, i+1)
		default:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// stringValue reads a JSON string member as encoding/json decodes it into a
// string field: null and absence leave it empty. ok is false for another
// type.
func stringValue(v []byte) (string, bool) {
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

// skipString returns the end of the string that starts at b[i] (a quote).
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the end of the valid JSON value that starts at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
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
