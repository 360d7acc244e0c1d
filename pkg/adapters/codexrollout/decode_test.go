package codexrollout

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzDecodeLine holds the one-pass decoding to the member-by-member one:
// whenever the scan takes a line, both read it the same.
func FuzzDecodeLine(f *testing.F) {
	for _, glob := range []string{"testdata/inventory.jsonl", "../../../testdata/recordings/codex-rollout/*.jsonl"} {
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
		`{"type":"event_msg","payload":{"type":"x"},"payload":{"y":1}}`,
		`{"type":"event_msg","Payload":{"type":"x"}}`,
		`{"type":"event_msg","payload":{"type":"x","turn_id":5}}`,
		`{"timestamp":5,"type":"session_meta","payload":{}}`,
		`{"type":"session_meta","payload":{"id":"a","ID":"b"}}`,
		`{"type":"world_state","payload":{"a":tru}}`,
		`{"type":"event_msg","payload":null}`,
		`{"type":"response_item","payload":[1]}`,
		`{"type":"t\u0079pe","payload":{}}`,
	} {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := decodeFast(b)
		if !ok {
			return
		}
		slow, err := decodeSlow(b)
		if err != nil {
			t.Fatalf("the scan took a line that does not decode: %v", err)
		}
		if (fast.err == nil) != (slow.err == nil) {
			t.Fatalf("payload decoding: fast %v, slow %v", fast.err, slow.err)
		}
		if !reflect.DeepEqual(fast.line, slow.line) || !reflect.DeepEqual(fast.ev, slow.ev) || !reflect.DeepEqual(fast.resp, slow.resp) || fast.kind != slow.kind {
			t.Fatalf("decoded differently:\nfast %+v\nslow %+v", fast, slow)
		}
	})
}
