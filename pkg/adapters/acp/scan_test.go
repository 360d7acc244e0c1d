package acp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
)

// slowMessage is what decode did before the scan: Unwrap, then decode.
func slowMessage(f adapter.Frame) (message, adapter.Direction, bool) {
	raw, dir, ok := f.Unwrap()
	if !ok {
		return message{}, "", false
	}
	var m message
	if json.Unmarshal(raw, &m) != nil {
		return message{}, "", false
	}
	return m, dir, true
}

func slowHead(params json.RawMessage) (string, json.RawMessage, string) {
	var p struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}
	_ = json.Unmarshal(params, &p)
	var h struct {
		SessionUpdate string `json:"sessionUpdate"`
	}
	_ = json.Unmarshal(p.Update, &h)
	return p.SessionID, p.Update, h.SessionUpdate
}

func slowStopReason(result json.RawMessage) (string, bool) {
	var r struct {
		StopReason *string `json:"stopReason"`
	}
	if json.Unmarshal(result, &r) != nil || r.StopReason == nil {
		return "", false
	}
	return *r.StopReason, true
}

func slowConfigOf(obj json.RawMessage, names ...string) map[string]json.RawMessage {
	var all map[string]json.RawMessage
	_ = json.Unmarshal(obj, &all)
	out := map[string]json.RawMessage{}
	for _, n := range names {
		if v, ok := all[n]; ok && present(v) {
			out[n] = v
		}
	}
	return out
}

// checkScan asserts that the scan reads a frame as encoding/json does,
// whenever it reads it at all.
func checkScan(t *testing.T, line []byte) {
	t.Helper()
	f := adapter.Frame{Bytes: line}
	if m, dir, _, ok := scanMessage(f); ok {
		want, wantDir, wantOK := slowMessage(f)
		if !wantOK || dir != wantDir || !reflect.DeepEqual(m, want) {
			t.Fatalf("scanMessage(%q) = %+v %q, decoding gives %+v %q %v", line, m, dir, want, wantDir, wantOK)
		}
	}
	var p struct {
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
	}
	_ = json.Unmarshal(line, &p)
	for _, obj := range [][]byte{line, p.Params, p.Result} {
		names := []string{"availableCommands", "stopReason", "a", "modes", "_meta", "update", "method"}
		got := configOf(obj, names...) // never a panic, valid or not
		r, ok := stopReason(obj)
		if !json.Valid(obj) {
			continue
		}
		if want := slowConfigOf(obj, names...); !reflect.DeepEqual(got, want) {
			t.Fatalf("configOf(%q) = %q, decoding gives %q", obj, got, want)
		}
		if wr, wok := slowStopReason(obj); r != wr || ok != wok {
			t.Fatalf("stopReason(%q) = %q %v, decoding gives %q %v", obj, r, ok, wr, wok)
		}
	}
	if json.Unmarshal(line, &p) == nil {
		sid, u, tag := paramsHead(p.Params)
		wsid, wu, wtag := slowHead(p.Params)
		if sid != wsid || !bytes.Equal(u, wu) || tag != wtag {
			t.Fatalf("paramsHead(%q) = %q %q %q, decoding gives %q %q %q", p.Params, sid, u, tag, wsid, wu, wtag)
		}
	}
}

func TestScanAgreesWithDecoding(t *testing.T) {
	t.Parallel()
	adaptertest.EachLine(t, []string{"testdata/*.jsonl", "../../../testdata/recordings/acp-*/*.jsonl", "../../../../shared/corpus/acp/*.jsonl"}, scanCases, checkScan)
}

var scanCases = []string{
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"sessionId":"s","update":{"sessionUpdate":"plan"}}}`,
	`{"dir":"agent","msg":{"id":null,"method":"m","params":null}}`,
	`{"dir":"bad","msg":{"id":1}}`,
	`{"dir":"client","msg":null}`,
	`{"dir":null,"msg":{"id":1,"result":{}}}`,
	`{"dir":"agent"}`,
	`{"dir":"agent","msg":[1]}`,
	`{"id":1,"ID":2,"result":{}}`,
	`{"Method":"a","method":"b"}`,
	`{"method":5}`,
	`{"method":"caf\u00e9","params":{"SessionId":"x","update":"str"}}`,
	`{"id":"7","error":{"code":-32601,"message":"no"}}`,
	`{"id":"7","error":{"code":"x"}}`,
	`{"id":"7","error":5}`,
	`{"id":"7","error":null,"result":null}`,
	`{"result":{"stopReason":"end_turn","stopReason":null}}`,
	`{"result":{"StopReason":7}}`,
	`{"result":{"stopReason":"a\u0062"}}`,
	`{"a":1,"a":null,"modes":{"x":[1,"]"]},"_meta":null}`,
	`{"a":"\\\"","availableCommands":[{"name":"\\"}]}`,
	` {"method" : "a" , "params" : { "sessionId" : "s" , "update" : { "sessionUpdate" : "t" } } } `,
	`{"method":"a","params":{"sessionId":5}}`,
	`{"method":"a","params":{"sessionId":"a","sessionId":"b"}}`,
	`{"method":"a","params":{"update":{"sessionUpdate":"a","sessionUpdate":null}}}`,
	`{"method":"a","params":{"s\u0065ssionId":"a"}}`,
	`{"method":"a","params":[1,2]}`,
	`{"method":"a\"b","params":{"sessionId":"\ud83d\ude00","update":{"sessionUpdate":7}}}`,
	"{\"method\":\"a\",\"params\":{\"sessionId\":\"\xff\"}}",
	`{}`, `[]`, `null`, `{"dir"`, `nope`, `{"`, `{"a":"`, `{"a":[{"`, `{"a"`, `{"a":`,
}

func FuzzScan(f *testing.F) {
	for _, s := range scanCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkScan(t, b) })
}
