package claudelog

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// checkScan asserts that scanLine reads a line as encoding/json does,
// whenever it reads it at all.
func checkScan(t *testing.T, b []byte) {
	t.Helper()
	l, _, ok := scanLine(b)
	if !ok {
		return
	}
	var want line
	if err := json.Unmarshal(b, &want); err != nil || !reflect.DeepEqual(l, want) {
		t.Fatalf("scanLine(%q) = %+v, decoding gives %+v (%v)", b, l, want, err)
	}
}

func TestScanAgreesWithDecoding(t *testing.T) {
	t.Parallel()
	var files []string
	for _, g := range []string{"testdata/*.jsonl", "../../../testdata/recordings/claude-log/*.jsonl", "../../../../shared/corpus/claude-sessionlog/*.jsonl"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	n := 0
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for l := range bytes.SplitSeq(b, []byte("\n")) {
			checkScan(t, l)
			n++
		}
	}
	for _, s := range scanCases {
		checkScan(t, []byte(s))
	}
	if n == 0 {
		t.Fatal("no lines")
	}
}

var scanCases = []string{
	`{"type":"user","sessionId":"s","isMeta":true,"message":{"role":"user","content":"hi"},"durationMs":12,"hookErrors":["a"],"retryAttempt":1,"maxRetries":null}`,
	`{"type":"system","durationMs":-1.5}`,
	`{"type":"system","durationMs":"1"}`,
	`{"type":"system","hookErrors":"a"}`,
	`{"type":"system","retryAttempt":1e2}`,
	`{"type":"system","retryAttempt":1.5}`,
	`{"type":"x","isSidechain":1}`,
	`{"type":"x","SessionID":"a"}`,
	`{"type":"x","type":"y"}`,
	`{}`, `[]`, `null`, `{"`, `nope`,
}

func FuzzScan(f *testing.F) {
	for _, s := range scanCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkScan(t, b) })
}
