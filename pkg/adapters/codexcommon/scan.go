package codexcommon

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/agentwire/agentwire/pkg/canonical"
)

// The scans below read JSON that encoding/json has already validated (a
// frame it decoded, a json.RawMessage member of one) without decoding it
// again: strings are skipped with bytes.IndexByte, only structure is
// looked at. They never panic on other input, but their answers are only
// meaningful for valid JSON. Whatever they cannot read exactly as
// encoding/json would (an escaped or non-ASCII key, a member named twice)
// they report, and the caller decodes with encoding/json instead.

// skipString returns the index just past the JSON string that starts at
// b[i] (a quote), or len(b) when it does not end.
func skipString(b []byte, i int) int {
	j := i + 1
	for j < len(b) {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		j += k
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
	return len(b)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value that starts at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// EachMember calls fn with the key (without its quotes, escapes left as
// they are) and the value of each member of the JSON object obj, in
// order, until fn returns false. It returns false when obj is not an
// object.
func EachMember(obj []byte, fn func(key, value []byte) bool) bool {
	return EachMemberAt(obj, func(key []byte, start, end int) bool { return fn(key, obj[start:end:end]) })
}

// EachMemberAt is EachMember that gives where each value is in obj.
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
		if end-1 <= i {
			return false
		}
		key := obj[i+1 : end-1]
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		start := skipSpace(obj, i+1)
		end = skipValue(obj, start)
		if end <= start {
			return false
		}
		if !fn(key, start, end) {
			return true
		}
		i = skipSpace(obj, end)
		if i >= len(obj) {
			return false
		}
		if obj[i] == '}' {
			return true
		}
		if obj[i] != ',' {
			return false
		}
		i = skipSpace(obj, i+1)
	}
	return false
}

// PlainKey reports whether a key can be compared byte for byte as
// encoding/json compares it: no escapes, ASCII only (encoding/json folds
// non-ASCII case and unquotes escapes).
func PlainKey(key []byte) bool {
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Compact reports whether valid JSON b has no whitespace outside its
// strings, that is whether json.Compact would leave it as it is.
func Compact(b []byte) bool {
	for i := 0; i < len(b); {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			return false
		case '"':
			i = skipString(b, i)
			continue
		}
		i++
	}
	return true
}

// RawOf is canonical.NewRaw for a frame encoding/json has decoded, so
// valid JSON: it skips the validation NewRaw repeats. The result is the
// same as NewRaw's.
func RawOf(source, method, messageType string, frame []byte) canonical.Raw {
	if utf8.Valid(frame) && Compact(frame) {
		return canonical.Raw{Source: source, Method: method, MessageType: messageType, Payload: bytes.Clone(frame)}
	}
	return canonical.NewRaw(source, method, messageType, frame)
}

// isNull reports a JSON null.
func isNull(v []byte) bool { return string(v) == "null" }

// Members returns the members of a JSON object whose value is not null,
// leaving out the keys named in skip: session.configured and
// thread.metadata.updated values must be present. A member with an empty
// name is left out too: canonical map keys are never empty (it stays in
// raw). raw is valid JSON (a member of a decoded document) or empty.
func Members(raw json.RawMessage, skip ...string) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	plain := true
	ok := EachMember(raw, func(k, v []byte) bool {
		if !PlainKey(k) {
			plain = false
			return false
		}
		if isNull(v) || len(k) == 0 || slicesContains(skip, string(k)) {
			delete(out, string(k))
			return true
		}
		out[string(k)] = v
		return true
	})
	if ok && plain {
		return out
	}
	return membersSlow(raw, skip...)
}

func membersSlow(raw json.RawMessage, skip ...string) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		if len(v) == 0 || isNull(v) || k == "" || slicesContains(skip, k) {
			continue
		}
		out[k] = v
	}
	return out
}

// StringMembers reads the string members named names of the JSON object
// obj as decoding obj into a struct of string fields with those json
// names would ("" when absent or null). ok is false when the scan cannot
// be sure of that (a key matching a name other than exactly, or twice; an
// escaped value; a value that is not a string): decode instead.
func StringMembers(obj []byte, names ...string) (values []string, ok bool) {
	values = make([]string, len(names))
	seen := make([]bool, len(names))
	ok = true
	if !EachMember(obj, func(k, v []byte) bool {
		if !PlainKey(k) {
			ok = false
			return false
		}
		for i, name := range names {
			if !bytes.EqualFold(k, []byte(name)) {
				continue
			}
			if string(k) != name || seen[i] {
				ok = false
				return false
			}
			seen[i] = true
			switch {
			case isNull(v):
			case len(v) >= 2 && v[0] == '"' && PlainKey(v[1:len(v)-1]):
				values[i] = string(v[1 : len(v)-1])
			default:
				ok = false
				return false
			}
		}
		return true
	}) {
		return nil, false
	}
	return values, ok
}
