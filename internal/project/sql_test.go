package project

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestJSONMap(t *testing.T) {
	t.Parallel()
	for _, m := range []map[string]json.RawMessage{
		{},
		{"model": json.RawMessage(`"gpt-5"`)},
		{"b": json.RawMessage(` [1, 2] `), "a": json.RawMessage(`{"x":null}`), `q"<é>\`: json.RawMessage(`true`), "n": nil},
	} {
		got := jsonMap(m)
		var back map[string]any
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("jsonMap(%v) = %s: not JSON: %v", m, got, err)
		}
		var want map[string]any
		ref, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, want) {
			t.Errorf("jsonMap(%v) = %s, want the object %s", m, got, ref)
		}
	}
	if jsonMap(nil) != nil {
		t.Error("jsonMap(nil) should be NULL (nil), not an empty object")
	}
}
