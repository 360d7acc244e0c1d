package adaptertest

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/pkg/adapters/adapter"
)

var update = flag.Bool("update", false, "rewrite the golden files of adapter tests")

// ReadLines reads a JSONL file as frames: one per non-empty line, without
// the newline.
func ReadLines(tb testing.TB, path string) [][]byte {
	tb.Helper()
	f, err := os.Open(path) //nolint:gosec // test inputs named by the test
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			out = append(out, bytes.Clone(sc.Bytes()))
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// superuserHome is the superuser's home directory on Linux.
const superuserHome = "/root"

// machinePaths are the spellings of home and scratch directories in the
// public transcripts the goldens are made from, and what a golden says
// instead: goldens are committed, and quote no one's machine.
var machinePaths = []struct {
	re   *regexp.Regexp
	with []byte
}{
	// A user's home: macOS's and Linux's, or the superuser's (a directory
	// only when a slash follows: "</root>" and "layouts/root.html" are not).
	{regexp.MustCompile(`/(?:(?:Users|home)/[A-Za-z][A-Za-z0-9._-]*|` + superuserHome[1:] + `(?P<sep>/))`), []byte(homePlaceholder + "${sep}")},
	{regexp.MustCompile(`/(?:private/)?tmp/`), []byte("/SCRATCH/")},
}

// MachinePath returns the first home or temporary directory path in b
// that ScrubPaths would replace, and whether there is one: what a
// committed recording or golden must not quote.
func MachinePath(b []byte) (string, bool) {
	for _, m := range machinePaths {
		for _, loc := range m.re.FindAllIndex(b, -1) {
			if p := string(b[loc[0]:loc[1]]); p != homePlaceholder {
				return p, true
			}
		}
	}
	return "", false
}

// homePlaceholder is what ScrubPaths writes for a home; it matches the
// home pattern itself.
const homePlaceholder = "/home/USER"

// ScrubPaths returns frames with home and temporary directories replaced
// by placeholders (/home/USER, /SCRATCH). Golden inputs are scrubbed
// before they are mapped, so the events — raw frames included — are what
// the adapter makes of the scrubbed frames, byte for byte.
func ScrubPaths(frames [][]byte) [][]byte {
	out := make([][]byte, len(frames))
	for i, f := range frames {
		for _, m := range machinePaths {
			f = m.re.ReplaceAll(f, m.with)
		}
		out[i] = f
	}
	return out
}

// Inputs reads every *.jsonl file matching glob as one Input.
func Inputs(tb testing.TB, glob string, partial bool) []Input {
	tb.Helper()
	paths, err := filepath.Glob(glob)
	if err != nil {
		tb.Fatal(err)
	}
	var out []Input
	for _, p := range paths {
		if strings.HasSuffix(p, ".golden.jsonl") {
			continue
		}
		out = append(out, Input{Name: filepath.Base(p), Frames: ReadLines(tb, p), Partial: partial})
	}
	return out
}

// Golden maps every <case>.jsonl matching glob (recordings, hand-written
// cases) and compares the events, one canonical document per line, with
// goldenDir/<case>.golden.jsonl. `go test -update` rewrites the goldens:
// review their diff as you would code. The comparison runs again on the
// rewritten files, so an update that is not stable fails.
func Golden(t *testing.T, a adapter.Adapter, glob, goldenDir string) {
	t.Helper()
	paths, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no golden inputs match %s", glob)
	}
	for _, p := range paths {
		if strings.HasSuffix(p, ".golden.jsonl") {
			continue
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			name := strings.TrimSuffix(filepath.Base(p), ".jsonl")
			frames := Frames(a.Dialect(), "golden/"+name, ScrubPaths(ReadLines(t, p)))
			got := encodeAll(t, MapAll(t, a, frames))
			golden := filepath.Join(goldenDir, name+".golden.jsonl")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil { //nolint:gosec // a reviewed test fixture
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden) //nolint:gosec // the test's own golden file
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("events differ from %s (run go test -update and review the diff)", golden)
			}
		})
	}
}

// Inventory checks an adapter against the dialect's INVENTORY rows (a copy
// in the package's testdata, TSV with provider, source, kind, ...): every
// row's kind has a Rule, some frame of framesPath is of that kind, and
// every event such a frame maps to is of a type the Rule lists (see
// checkRules) — so the published mapping table says what the code does.
func Inventory(t *testing.T, a adapter.Adapter, inventoryPath, framesPath string) {
	t.Helper()
	// The frames are one session, mapped in order, so each is seen in the
	// context it needs (an item inside a turn).
	frames := Frames(a.Dialect(), "inventory", ReadLines(t, framesPath))
	perFrame, kinds := mapKinds(t, a, frames)
	byKind := map[string][]int{}
	for i := range frames {
		for _, k := range kinds[i] {
			byKind[k] = append(byKind[k], i)
		}
	}
	rows := ReadLines(t, inventoryPath)
	if len(rows) == 0 {
		t.Fatalf("%s has no rows", inventoryPath)
	}
	for _, row := range rows {
		cols := strings.Split(string(row), "\t")
		if len(cols) < 3 || cols[0] == "provider" {
			continue
		}
		kind := cols[2]
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			rule, ok := a.Rules().Lookup(kind)
			if !ok {
				t.Fatalf("no mapping rule for %s", kind)
			}
			if len(rule.Emits) == 0 && rule.Note == "" {
				t.Errorf("%s maps to nothing and says not why", kind)
			}
			idx := byKind[kind]
			if len(idx) == 0 {
				t.Fatalf("no frame of kind %s in %s", kind, framesPath)
			}
			for _, i := range idx {
				checkRules(t, a, frames[i], kinds[i], perFrame[i])
			}
		})
	}
}
