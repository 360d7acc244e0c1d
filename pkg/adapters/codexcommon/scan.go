package codexcommon

import (
	"bytes"
	"encoding/json"

	"github.com/agentwire/agentwire/internal/jsonscan"
)

// Members and StringMembers read JSON that has already been validated
// (a frame, a member of one) by jsonscan's scans, and fall back to
// encoding/json whenever a scan cannot be sure to read it the same.

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
	ok := jsonscan.EachMember(raw, func(k, v []byte) bool {
		if !jsonscan.PlainKey(k) {
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
	_ = jsonscan.Unmarshal(raw, &m)
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
	if !jsonscan.EachMember(obj, func(k, v []byte) bool {
		if !jsonscan.PlainKey(k) {
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
			case len(v) >= 2 && v[0] == '"' && jsonscan.PlainKey(v[1:len(v)-1]):
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
