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
	var vals [2][]byte
	ok = membersOf(obj, []string{a, b}, vals[:])
	return vals[0], vals[1], ok
}

// membersOf is members for any number of names: vals[i] is the value of
// names[i] (nil when absent).
func membersOf(obj []byte, names []string, vals [][]byte) bool {
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
