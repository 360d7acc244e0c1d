package project

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStorableJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, want string }{
		{"nothing escaped", `{"a":"b"}`, `{"a":"b"}`},
		{"other escapes", `{"a":"\n\"\\\u003c\u00e9"}`, `{"a":"\n\"\\\u003c\u00e9"}`},
		{"NUL", `{"delta":"a\u0000b"}`, `{"delta":"a\ufffdb"}`},
		{"NUL in a key", `{"\u0000":1}`, `{"\ufffd":1}`},
		{"an escaped backslash, then u0000", `{"a":"\\u0000"}`, `{"a":"\\u0000"}`},
		{"an escaped backslash, then NUL", `{"a":"\\\u0000"}`, `{"a":"\\\ufffd"}`},
		{"a surrogate pair", `{"a":"\ud83d\ude00"}`, `{"a":"\ud83d\ude00"}`},
		{"upper-case hex", `{"a":"\uD83D\uDE00\u0000"}`, `{"a":"\uD83D\uDE00\ufffd"}`},
		{"a high surrogate cut off", `{"a":"\ud83d"}`, `{"a":"\ufffd"}`},
		{"a high surrogate, then text", `{"a":"\ud83dx"}`, `{"a":"\ufffdx"}`},
		{"two high surrogates, then a low one", `["\ud83d\ud83d\ude00"]`, `["\ufffd\ud83d\ude00"]`},
		{"a lone low surrogate", `["\ude00\u0000"]`, `["\ufffd\ufffd"]`},
		{"broken at the end", `"\`, `"\`},
		{"a short escape at the end", `"\u00`, `"\u00`},
	} {
		got := storableJSON([]byte(c.in))
		require.Equal(t, c.want, string(got), c.name)
	}
	in := []byte(`{"a":"\u003c"}`)
	require.Same(t, &in[0], &storableJSON(in)[0], "a document with nothing to replace is not copied")
}

func TestStorableText(t *testing.T) {
	t.Parallel()
	require.Equal(t, "a\uFFFDb\uFFFD", storableText("a\x00b\x00"))
	require.Equal(t, `\u0000 is NUL`, storableText(`\u0000 is NUL`), "text is not JSON")
	s := strings.Repeat("x", 100)
	require.Equal(t, s, storableText(s))
}

// FuzzStorableJSON: for valid JSON, the output is valid JSON and decodes to
// what the input decodes to with every U+0000 replaced (a lone surrogate
// decodes to U+FFFD either way), and it has no escape Postgres refuses.
func FuzzStorableJSON(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `"\u0000"`, `["\ud83d", "\ude00\ud83d\ude00", "\\u0000"]`, `{"\u0000\\":"\ud83dx"}`, `"\uD800\uDC00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		out := storableJSON(doc)
		if !json.Valid(doc) {
			return
		}
		require.True(t, json.Valid(out), "%q became %q", doc, out)
		var want, got any
		require.NoError(t, json.Unmarshal(doc, &want))
		require.NoError(t, json.Unmarshal(out, &got))
		require.Equal(t, withoutNUL(want), got, "%q became %q", doc, out)
		for i := 0; i < len(out); {
			j := bytes.IndexByte(out[i:], '\\')
			if j < 0 {
				break
			}
			i += j
			r, ok := escapedUnit(out, i)
			if !ok {
				i += 2
				continue
			}
			require.NotZero(t, r, "%q still escapes NUL", out)
			if r >= 0xD800 && r <= 0xDBFF {
				lo, ok := escapedUnit(out, i+6)
				require.True(t, ok && lo >= 0xDC00 && lo <= 0xDFFF, "%q has a lone high surrogate", out)
				i += 12
				continue
			}
			require.False(t, r >= 0xDC00 && r <= 0xDFFF, "%q has a lone low surrogate", out)
			i += 6
		}
	})
}

// withoutNUL is v, decoded JSON, with U+0000 replaced in every string.
func withoutNUL(v any) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, "\x00", "\uFFFD")
	case []any:
		for i := range x {
			x[i] = withoutNUL(x[i])
		}
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[strings.ReplaceAll(k, "\x00", "\uFFFD")] = withoutNUL(e)
		}
		return m
	}
	return v
}

// BenchmarkStorableJSON is what making the recordings' documents storable
// costs per document: most have nothing to replace, and are only read.
func BenchmarkStorableJSON(b *testing.B) {
	msgs := recordedMsgs(b)
	size := 0
	for _, m := range msgs {
		size += len(m.Data)
	}
	b.SetBytes(int64(size / len(msgs)))
	for i := 0; b.Loop(); i++ {
		storableJSON(msgs[i%len(msgs)].Data)
	}
}
