package project

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
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
	for _, s := range []string{`{"a":"b"}`, `"\u0000"`, `["\ud83d", "\ude00\ud83d\ude00", "\\u0000"]`, `{"\u0000\\":"\ud83dx"}`, `"\uD800\uDC00"`, `{"\u0000":1,"\ufffd":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		out := storableJSON(doc)
		if !json.Valid(doc) {
			return
		}
		require.True(t, json.Valid(out), "%q became %q", doc, out)
		want, got := decodeJSON(t, doc), decodeJSON(t, out)
		want, distinct := withoutNUL(want)
		if !distinct {
			return // two keys of an object became one: which value wins is the decoder's
		}
		require.Equal(t, want, got, "%q became %q", doc, out)
		// No U+0000 is left: got equals want, which has none. No lone
		// surrogate is left: a strict reader refuses one, as Postgres does
		// (it refuses invalid UTF-8 too, so only where the input had none).
		if utf8.Valid(doc) {
			strict := jsontext.NewDecoder(bytes.NewReader(out), jsontext.AllowDuplicateNames(true))
			for {
				_, err := strict.ReadToken()
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err, "%q became %q", doc, out)
			}
		}
	})
}

// decodeJSON decodes the valid JSON doc, numbers as they are written
// (1E700 is valid JSON and no float64).
func decodeJSON(t *testing.T, doc []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	return v
}

// withoutNUL is v, decoded JSON, with U+0000 replaced in every string;
// distinct is false when that made two keys of an object one.
func withoutNUL(v any) (_ any, distinct bool) {
	distinct = true
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, "\x00", "\uFFFD"), true
	case []any:
		for i := range x {
			var ok bool
			x[i], ok = withoutNUL(x[i])
			distinct = distinct && ok
		}
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			e, ok := withoutNUL(e)
			m[strings.ReplaceAll(k, "\x00", "\uFFFD")] = e
			distinct = distinct && ok
		}
		return m, distinct && len(m) == len(x)
	}
	return v, distinct
}
