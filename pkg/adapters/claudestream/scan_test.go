package claudestream

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
)

// checkScan asserts that the scans read a frame as encoding/json does,
// whenever they read it at all.
func checkScan(t *testing.T, line []byte) {
	t.Helper()
	f := adapter.Frame{Bytes: line}
	if msg, dir, fr, ok := scanFrame(f, jsonscan.Check(f.Bytes)); ok {
		wmsg, wdir, wok := f.Unwrap()
		var want frame
		if !wok || json.Unmarshal(wmsg, &want) != nil || dir != wdir || !bytes.Equal(msg, wmsg) || !reflect.DeepEqual(fr, want) {
			t.Fatalf("scanFrame(%q) = %+v %q, decoding gives %+v %q %v", line, fr, dir, want, wdir, wok)
		}
		var wh header
		_ = json.Unmarshal(msg, &wh)
		if k, wk := fr.header().kinds(), wh.kinds(); !reflect.DeepEqual(k, wk) {
			t.Fatalf("kinds of %q = %q, decoding gives %q", line, k, wk)
		}
	}
	var fr frame
	_ = json.Unmarshal(line, &fr)
	for _, raw := range []json.RawMessage{line, fr.Message, fr.Request, fr.Response} {
		m, err := DecodeMessage(raw) // never a panic, valid or not
		cfg := ConfigOf(raw, "type")
		cr, crErr := decodeControlResponse(raw)
		if !json.Valid(raw) {
			continue
		}
		var wcr controlResponse
		wcrErr := json.Unmarshal(raw, &wcr)
		if (crErr == nil) != (wcrErr == nil) || (crErr == nil && !reflect.DeepEqual(cr, wcr)) {
			t.Fatalf("decodeControlResponse(%q) = %+v %v, decoding gives %+v %v", raw, cr, crErr, wcr, wcrErr)
		}
		var want Message
		werr := json.Unmarshal(raw, &want)
		if (err == nil) != (werr == nil) || (err == nil && !reflect.DeepEqual(m, want)) {
			t.Fatalf("DecodeMessage(%q) = %+v %v, decoding gives %+v %v", raw, m, err, want, werr)
		}
		var wcfg map[string]json.RawMessage
		if json.Unmarshal(raw, &wcfg) != nil || wcfg == nil {
			wcfg = map[string]json.RawMessage{}
		}
		delete(wcfg, "type")
		delete(wcfg, "") // an empty name is no canonical key
		if !reflect.DeepEqual(cfg, wcfg) {
			t.Fatalf("ConfigOf(%q) = %q, decoding gives %q", raw, cfg, wcfg)
		}
		if err != nil {
			continue
		}
		blocks, raws, err := m.Blocks()
		wblocks, wraws, werr := slowBlocks(m)
		if (err == nil) != (werr == nil) || !reflect.DeepEqual(blocks, wblocks) || !reflect.DeepEqual(raws, wraws) {
			t.Fatalf("Blocks(%q) = %+v %q %v, decoding gives %+v %q %v", m.Content, blocks, raws, err, wblocks, wraws, werr)
		}
	}
}

// slowBlocks is Blocks as it was before the scan.
func slowBlocks(m Message) ([]Block, []json.RawMessage, error) {
	c := bytes.TrimSpace(m.Content)
	if len(c) == 0 || string(c) == "null" || c[0] == '"' {
		return m.Blocks()
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(c, &raws); err != nil {
		return nil, nil, err
	}
	blocks := make([]Block, len(raws))
	for i, r := range raws {
		if err := json.Unmarshal(r, &blocks[i]); err != nil {
			return nil, nil, err
		}
	}
	return blocks, raws, nil
}

func TestScanAgreesWithDecoding(t *testing.T) {
	t.Parallel()
	adaptertest.EachLine(t, []string{"testdata/*.jsonl", "../../../testdata/recordings/claude-*/*.jsonl", "../../../../shared/corpus/claude-stream/*.jsonl"}, scanCases, checkScan)
}

var scanCases = []string{
	`{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t","input":{"a":[1,"]"]}}],"stop_reason":null}}`,
	`{"type":"user","message":{"content":"plain \"prompt\""}}`,
	`{"type":"user","message":{"content":[]}}`,
	`{"type":"user","message":{"content":[null,{"type":"tool_result","content":[{"type":"text"}],"is_error":true}]}}`,
	`{"type":"user","message":{"content":[{"is_error":"yes"}]}}`,
	`{"type":"user","message":{"content":{"type":"text"}}}`,
	`{"type":"user","message":{"content":[1]}}`,
	`{"type":"user","message":"text"}`,
	`{"type":"user","message":null}`,
	`{"type":"a","Type":"b"}`,
	`{"type":5}`,
	`{"type":"x","isReplay":"true"}`,
	`{"type":"x","isReplay":true,"request_id":7}`,
	`{"type":"x","ty\u0070e":"y"}`,
	`{"dir":"client","msg":{"type":"user","message":{"role":"user","content":"hi"}}}`,
	`{"dir":"agent","msg":null}`,
	`{"dir":"nobody","msg":{"type":"x"}}`,
	`{"dir":5,"msg":{"type":"x"}}`,
	` { "type" : "system" , "subtype" : "init" , "tools" : [ ] } `,
	"{\"type\":\"x\",\"session_id\":\"\xff\"}",
	"{\"type\":\"x\",\"\xff\":1}",
	`{"a":1,"a":2,"type":"t"}`,
	`{"message":{"id":"m","ID":"n"}}`,
	`{"message":{"stop_reason":"end_turn","usage":{"input_tokens":1}}}`,
	`{"message":{"stop_reason":3}}`,
	`{"type":"control_request","request_id":"r","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"}}}`,
	`{"type":"control_request","request":{"subtype":5}}`,
	`{"type":"control_request","request":null}`,
	`{"type":"control_request","request":"x"}`,
	`{"type":"control_response","response":{"subtype":"success","request_id":"r","response":{"behavior":"allow","updatedInput":{}}}}`,
	`{"type":"control_response","response":{"subtype":"success","response":null}}`,
	`{"type":"control_response","response":{"subtype":"success","response":{"behavior":1}}}`,
	`{"type":"control_response","response":{"subtype":"error","error":"e","response":[1]}}`,
	`{"type":"control_response","response":{"subtype":"success","Response":{"Behavior":"deny"}}}`,
	`{"type":"control_response","response":{"request_id":7}}`,
	`{}`, `[]`, `null`, `"s"`, `{"`, `{"type":"`, `{"dir"`, `nope`,
}

func FuzzScan(f *testing.F) {
	for _, s := range scanCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkScan(t, b) })
}
