package jsonscan

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The scans below read JSON already known to be valid (a frame Check
// accepted, a member of one) without decoding it: strings are skipped with
// bytes.IndexByte, only structure is looked at. They never panic on other
// input, but their answers are only meaningful for valid JSON. Whatever
// they cannot read exactly as encoding/json would (an escaped or
// non-ASCII key, a member named twice, a value of another type) they
// report, and the caller decodes with encoding/json instead.

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at b[i]
// (a quote), or -1 when it does not end.
func skipString(b []byte, i int) int {
	for i++; i <= len(b); {
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
	return -1
}

// skipValue returns the index just past the value that starts at b[i], or
// -1 when it does not end within b.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end := skipString(b, i)
				if end < 0 {
					return -1
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
		return -1
	}
	start := i
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			if i == start {
				return -1
			}
			return i
		}
	}
	return i
}

// EachMember calls fn with the key (between its quotes, escapes as
// written) and the value of each member of the JSON object obj, in order,
// until fn returns false. It returns false when obj is not an object.
func EachMember(obj []byte, fn func(key, value []byte) bool) bool {
	return EachMemberAt(obj, func(key []byte, start, end int) bool { return fn(key, obj[start:end:end]) })
}

// EachMemberAt is EachMember that says where each value is in obj.
func EachMemberAt(obj []byte, fn func(key []byte, start, end int) bool) bool {
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
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		start := skipSpace(obj, i+1)
		end = skipValue(obj, start)
		if end < 0 {
			return false
		}
		if !fn(key, start, end) {
			return true
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

// Fields reads the members of a valid JSON object named names, matched as
// encoding/json matches struct fields (exactly or case-insensitively):
// vals[i] is the value of names[i], nil when absent. It returns false when
// obj is not an object, a key is escaped, or a name matches twice.
func Fields(obj []byte, names []string, vals [][]byte) bool {
	ok := true
	return EachMember(obj, func(key, val []byte) bool {
		if bytes.IndexByte(key, '\\') >= 0 {
			ok = false
			return false
		}
		for n, name := range names {
			if bytes.EqualFold(key, []byte(name)) {
				if vals[n] != nil {
					ok = false
					return false
				}
				vals[n] = val
				return true
			}
		}
		return true
	}) && ok
}

// Elements returns the elements of a valid JSON array; ok is false when v
// is not an array.
func Elements(v []byte) ([]json.RawMessage, bool) {
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
		if end < 0 {
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

// String reads a JSON string member as encoding/json decodes it into a
// string field: null and absence (nil) leave it empty. ok is false for
// another type.
func String(v []byte) (string, bool) {
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

// Bool reads a JSON bool member as encoding/json decodes it into a bool
// field: null and absence leave it false. ok is false for another type.
func Bool(v []byte) (b, ok bool) {
	switch string(v) {
	case "", "null", "false":
		return false, true
	case "true":
		return true, true
	}
	return false, false
}

// PlainKey reports whether a key (or string) can be compared byte for byte
// as encoding/json compares it: no escapes, ASCII only (encoding/json
// folds non-ASCII case and unquotes escapes).
func PlainKey(key []byte) bool {
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
