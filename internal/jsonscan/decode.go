package jsonscan

import jsonv1 "github.com/go-json-experiment/json/v1"

// Unmarshal is json.Unmarshal with encoding/json's semantics (case-folded
// member names, last duplicate wins, invalid UTF-8 replaced), run on the
// JSON v2 engine that becomes encoding/json's own in Go 1.27. On Go 1.26
// encoding/json still validates every document in a separate pass before
// decoding it, and decoding was half of what the Codex and ACP adapters
// spent per frame; the v2 engine does both in one pass, about twice as
// fast on their frames.
func Unmarshal(data []byte, v any) error { return jsonv1.Unmarshal(data, v) }
