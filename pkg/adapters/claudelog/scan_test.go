package claudelog

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentwire/agentwire/internal/adaptertest"
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
	adaptertest.EachLine(t, []string{"testdata/*.jsonl", "../../../testdata/recordings/claude-log/*.jsonl", "../../../../shared/corpus/claude-sessionlog/*.jsonl"}, scanCases, checkScan)
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
