package jsonscan

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestFields(t *testing.T) {
	t.Parallel()

	names := []string{"type", "id"}
	cases := []struct {
		in   string
		ok   bool
		want [2]string
	}{
		{`{"type":"a","x":[1,{"y":"}"}],"id":"b"}`, true, [2]string{`"a"`, `"b"`}},
		{` { "TYPE" : 1 } `, true, [2]string{`1`, ``}},
		{`{}`, true, [2]string{}},
		{`{"type":"a","Type":"b"}`, false, [2]string{}},
		{`{"typ\u0065":"a"}`, false, [2]string{}},
		{`[1]`, false, [2]string{}},
	}
	for _, c := range cases {
		var v [2][]byte
		ok := Fields([]byte(c.in), names, v[:])
		if ok != c.ok {
			t.Errorf("Fields(%s) ok = %v", c.in, ok)
			continue
		}
		if ok && (string(v[0]) != c.want[0] || string(v[1]) != c.want[1]) {
			t.Errorf("Fields(%s) = %q", c.in, v)
		}
	}
}

// FuzzScans holds the scans to encoding/json on valid documents: Fields
// and String to decoding into a struct, Elements to decoding into a slice,
// Bool to decoding into a bool.
func FuzzScans(f *testing.F) {
	for _, s := range []string{
		`{"type":"a","id":"b","x":null,"y":[1,{"z":"\""}]}`, `{"id":"a","id":"b"}`, `{"ID":"a"}`, `{"id":5}`,
		`{"id":"\u0061"}`, `{"\u0069d":"a"}`, `{ "type" : "x y" , "ok":true}`, `[1,"a",{"b":[]}]`, `"s"`, `null`, `{}`,
		"{\"id\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !Valid(b) {
			return
		}
		var v [3][]byte
		if Fields(b, []string{"type", "id", "ok"}, v[:]) {
			typ, ok1 := String(v[0])
			id, ok2 := String(v[1])
			flag, ok3 := Bool(v[2])
			if ok1 && ok2 && ok3 {
				var p struct {
					Type string `json:"type"`
					ID   string `json:"id"`
					OK   bool   `json:"ok"`
				}
				if err := json.Unmarshal(b, &p); err != nil {
					t.Fatalf("Fields read %s, which does not decode: %v", b, err)
				}
				if p.Type != typ || p.ID != id || p.OK != flag {
					t.Fatalf("scanned %q %q %v, decoded %+v", typ, id, flag, p)
				}
			}
		}
		if els, ok := Elements(b); ok {
			var want []json.RawMessage
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatalf("Elements read %s, which does not decode: %v", b, err)
			}
			if len(els) != len(want) {
				t.Fatalf("Elements %q, decoded %q", els, want)
			}
			for i := range els {
				var x, y any
				_ = json.Unmarshal(els[i], &x)
				_ = json.Unmarshal(want[i], &y)
				if !reflect.DeepEqual(x, y) {
					t.Fatalf("element %d: %s, decoded %s", i, els[i], want[i])
				}
			}
		}
	})
}
