package codexcommon

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzScan holds the scans to encoding/json: Members to decoding into a
// map, StringMembers to decoding into a struct.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","session_id":"b","x":null,"y":[1,{"z":"\""}]}`,
		`{"id":"a","id":"b"}`, `{"ID":"a"}`, `{"id":5}`, `{"id":"\u0061"}`, `{"\u0069d":"a","k":1}`,
		`{ "a" : 1 , "b":"x y" }`, `[1,2]`, `"s"`, `null`, `{}`, "{\"a\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		if got, want := Members(b, "skip"), membersSlow(b, "skip"); !reflect.DeepEqual(got, want) {
			t.Fatalf("Members %q, decoded %q", got, want)
		}
		if v, ok := StringMembers(b, "id", "session_id"); ok {
			var p struct {
				ID        string `json:"id"`
				SessionID string `json:"session_id"`
			}
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatalf("StringMembers took %s, which does not decode: %v", b, err)
			}
			if v[0] != p.ID || v[1] != p.SessionID {
				t.Fatalf("StringMembers %q, decoded %+v", v, p)
			}
		}
	})
}
