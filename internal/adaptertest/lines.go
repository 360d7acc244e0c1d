package adaptertest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// EachLine calls check with every line of the files the globs match, the
// empty ones too, then with each of cases: how the scanners' tests hold a
// fast scanner to what decoding reads, on every frame the project has.
// It fails when the files hold no line, a glob gone stale.
func EachLine(t *testing.T, globs, cases []string, check func(t *testing.T, line []byte)) {
	t.Helper()
	n := 0
	for _, g := range globs {
		files, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			b, err := os.ReadFile(name) //nolint:gosec // test inputs named by the test
			if err != nil {
				t.Fatal(err)
			}
			for line := range bytes.SplitSeq(b, []byte("\n")) {
				check(t, line)
				n++
			}
		}
	}
	for _, c := range cases {
		check(t, []byte(c))
	}
	if n == 0 {
		t.Fatalf("no line in %q", globs)
	}
}
