package jsonscan

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reference is what Check must agree with: encoding/json's validator and
// compactor, and a depth counted by decoding.
func reference(b []byte) Info {
	if !json.Valid(b) {
		return Info{}
	}
	var c bytes.Buffer
	_ = json.Compact(&c, b)
	return Info{Valid: true, Compact: bytes.Equal(c.Bytes(), b), Depth: depthOf(b)}
}

func depthOf(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()

	cases := []struct {
		in   string
		want Info
	}{
		{`{}`, Info{true, true, 1}},
		{`[]`, Info{true, true, 1}},
		{`0`, Info{true, true, 0}},
		{` 0`, Info{true, false, 0}},
		{"0\n", Info{true, false, 0}},
		{`-0.5e+10`, Info{true, true, 0}},
		{`{"a":[1,{"b":null}],"c":"\u00e9\n"}`, Info{true, true, 3}},
		{`{"a" : 1}`, Info{true, false, 1}},
		{`{"a":"x y"}`, Info{true, true, 1}},
		{"\"\xff\xfe\"", Info{true, true, 0}}, // not UTF-8, still valid JSON
		{``, Info{}},
		{` `, Info{}},
		{`{`, Info{}},
		{`{"a"}`, Info{}},
		{`{"a":1,}`, Info{}},
		{`[1,]`, Info{}},
		{`[1 2]`, Info{}},
		{`{1:2}`, Info{}},
		{`01`, Info{}},
		{`-`, Info{}},
		{`1.`, Info{}},
		{`1e`, Info{}},
		{`tru`, Info{}},
		{`nul`, Info{}},
		{`"a`, Info{}},
		{"\"a\tb\"", Info{}},
		{`"\x"`, Info{}},
		{`"\u12"`, Info{}},
		{`{}{}`, Info{}},
		{`[}`, Info{}},
		{`{]`, Info{}},
		{`]`, Info{}},
	}
	for _, c := range cases {
		if got := Check([]byte(c.in)); got != c.want {
			t.Errorf("Check(%q) = %+v, want %+v", c.in, got, c.want)
		}
		if ref := reference([]byte(c.in)); ref != c.want {
			t.Errorf("the table disagrees with encoding/json on %q: %+v", c.in, ref)
		}
	}
}

func TestCheckDeep(t *testing.T) {
	t.Parallel()

	deep := strings.Repeat("[", 1_000_000) + strings.Repeat("]", 1_000_000)
	if got := Check([]byte(deep)); got != (Info{Valid: true, Compact: true, Depth: 1_000_000}) {
		t.Fatalf("a million nested arrays: %+v", got)
	}
	if Check([]byte(deep[:len(deep)-1])).Valid {
		t.Fatal("one bracket short is valid")
	}
}

// TestCheckRecordings holds Check to encoding/json on every line the
// project records, valid or broken.
func TestCheckRecordings(t *testing.T) {
	t.Parallel()

	for _, line := range recordedLines(t) {
		if got, want := Check(line), reference(line); got != want {
			t.Fatalf("Check = %+v, encoding/json %+v on %.200s", got, want, line)
		}
	}
}

func recordedLines(tb testing.TB) [][]byte {
	tb.Helper()
	paths, err := filepath.Glob("../../testdata/recordings/*/*.jsonl")
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no recordings: %v", err)
	}
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		for l := range bytes.SplitSeq(b, []byte("\n")) {
			out = append(out, l, l[:len(l)/2])
		}
	}
	return out
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e-3,true,false,null,"\u00e9"]}`, ` [ {} ] `, `"\\"`, `-0`, `{"a":{"b":[[]]}}`,
		` { "k\"ey" : "v" , "n":1 ,"o":{"x":[]} } `, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := reference(b)
		if got := Check(b); got != want {
			t.Fatalf("Check(%q) = %+v, encoding/json %+v", b, got, want)
		}
		// CheckObject answers as Check does and, for a valid object, finds
		// the members EachMemberAt finds.
		info, members := CheckObject(b, nil)
		if info != want {
			t.Fatalf("CheckObject(%q) = %+v, encoding/json %+v", b, info, want)
		}
		if !info.Valid {
			return
		}
		var scanned []Member
		object := EachMemberAt(b, func(key []byte, start, end int) bool {
			k := len(key) // key is b[KeyStart:KeyEnd]
			scanned = append(scanned, Member{Start: start, End: end, KeyEnd: k})
			return true
		})
		if !object {
			if len(members) != 0 {
				t.Fatalf("CheckObject(%q) found members %v in no object", b, members)
			}
			return
		}
		if len(members) != len(scanned) {
			t.Fatalf("CheckObject(%q) found %d members, EachMemberAt %d", b, len(members), len(scanned))
		}
		for i, m := range members {
			s := scanned[i]
			if m.Start != s.Start || m.End != s.End || m.KeyEnd-m.KeyStart != s.KeyEnd || m.KeyStart < 1 || b[m.KeyStart-1] != '"' || b[m.KeyEnd] != '"' {
				t.Fatalf("CheckObject(%q) member %d = %+v, EachMemberAt %+v", b, i, m, s)
			}
		}
	})
}

func BenchmarkValid(b *testing.B) {
	lines := recordedLines(b)
	var size int64
	for _, l := range lines {
		size += int64(len(l))
	}
	b.Run("jsonscan", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			for _, l := range lines {
				Valid(l)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			for _, l := range lines {
				json.Valid(l)
			}
		}
	})
}
