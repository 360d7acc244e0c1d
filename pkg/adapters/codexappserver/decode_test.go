package codexappserver

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentwire/agentwire/pkg/adapters/adapter"
)

// FuzzDecode holds the one-pass decoding of tap lines and of params' ids
// to the decoding they replace: whenever a scan takes its input, both
// read it the same.
func FuzzDecode(f *testing.F) {
	for _, glob := range []string{"testdata/inventory.jsonl", "../../../testdata/recordings/codex-app-server/*.jsonl"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			for l := range bytes.SplitSeq(b, []byte("\n")) {
				f.Add(l)
			}
		}
	}
	for _, l := range []string{
		`{"dir":"agent","msg":{"method":"a"},"msg":{"id":1}}`,
		`{"dir":"agent","MSG":{"method":"a"}}`,
		`{"dir":"nobody","msg":{"method":"a"}}`,
		`{"dir":"client","msg":{"method":"a","params":{"threadId":"t","thread":{"id":"u"},"turnId":5}}}`,
		`{"dir":"client","msg":{"method":"a","params":{"threadId":"t","threadid":"u"}}}`,
		`{"dir":"agent","msg":null}`,
		`{"method":"a","params":{"turn":{"id":"x","ID":"y"}}}`,
	} {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if trimmed := bytes.TrimSpace(b); bytes.HasPrefix(trimmed, []byte(`{"dir"`)) {
			if m, dir, ok := decodeTap(trimmed); ok {
				msg, wdir, wok := adapter.Frame{Bytes: b}.Unwrap()
				var want message
				if !wok || json.Unmarshal(msg, &want) != nil {
					t.Fatalf("the scan took a tap line that does not decode")
				}
				if dir != wdir || !reflect.DeepEqual(m, want) {
					t.Fatalf("decoded differently:\nfast %+v\nslow %+v", m, want)
				}
			}
		}
		var m message
		if json.Unmarshal(b, &m) != nil || len(m.Params) == 0 {
			return
		}
		var fast, slow ids
		if !fast.scan(m.Params) {
			return
		}
		if err := json.Unmarshal(m.Params, &slow); err != nil {
			t.Fatalf("the scan took params that do not decode: %v", err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("ids differ:\nfast %+v\nslow %+v", fast, slow)
		}
	})
}
