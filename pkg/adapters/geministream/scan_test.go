package geministream

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentwire/agentwire/internal/adaptertest"
)

// checkScan asserts that scanEvent reads a frame as encoding/json does,
// whenever it reads it at all.
func checkScan(t *testing.T, b []byte) {
	t.Helper()
	ev, _, ok := scanEvent(b)
	if !ok {
		return
	}
	var want event
	if err := json.Unmarshal(b, &want); err != nil || !reflect.DeepEqual(ev, want) {
		t.Fatalf("scanEvent(%q) = %+v, decoding gives %+v (%v)", b, ev, want, err)
	}
}

func TestScanAgreesWithDecoding(t *testing.T) {
	t.Parallel()
	adaptertest.EachLine(t, []string{"testdata/*.jsonl", "../../../testdata/recordings/gemini-stream/*.jsonl", "../../../../shared/corpus/gemini*/*.jsonl"}, scanCases, checkScan)
}

var scanCases = []string{
	`{"type":"message","role":"assistant","content":"hi \"there\"","delta":true}`,
	`{"type":"message","content":null,"delta":null}`,
	`{"type":"message","content":5}`,
	`{"type":"message","delta":"true"}`,
	`{"type":"tool_result","tool_id":"t","status":"error","output":null,"error":{"type":"x","message":"m"}}`,
	`{"type":"result","stats":{"total_tokens":3}}`,
	`{"type":"x","Type":"y"}`,
	`{"type":"x","TOOL_NAME":"y"}`,
	"{\"type\":\"x\",\"model\":\"\xff\"}",
	`{"type":"x","model":"\u00e9"}`,
	`{}`, `[]`, `null`, `{"`, `nope`,
}

func FuzzScan(f *testing.F) {
	for _, s := range scanCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkScan(t, b) })
}
