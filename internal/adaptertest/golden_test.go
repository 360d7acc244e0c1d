package adaptertest

import "testing"

// TestScrubPaths: home and temporary directories become placeholders, and
// MachinePath finds exactly what ScrubPaths replaces.
func TestScrubPaths(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{"cwd":"/Users/ann/src/x"}`, `{"cwd":"/home/USER/src/x"}`},
		{`{"cwd":"/home/bob.smith/x"}`, `{"cwd":"/home/USER/x"}`},
		{`{"cwd":"` + superuserHome + `/.codex/s"}`, `{"cwd":"/home/USER/.codex/s"}`},
		{`{"f":"/tmp/a","g":"/private/tmp/b"}`, `{"f":"/SCRATCH/a","g":"/SCRATCH/b"}`},
		{`<root>/SCRATCH/p</root> layouts/root.html /home/.codex/x`, `<root>/SCRATCH/p</root> layouts/root.html /home/.codex/x`},
	}
	for _, tt := range tests {
		got := string(ScrubPaths([][]byte{[]byte(tt.in)})[0])
		if got != tt.want {
			t.Errorf("ScrubPaths(%s) = %s, want %s", tt.in, got, tt.want)
		}
		if _, found := MachinePath([]byte(tt.in)); found != (tt.in != tt.want) {
			t.Errorf("MachinePath(%s) found %v", tt.in, found)
		}
		if leak, found := MachinePath([]byte(got)); found {
			t.Errorf("ScrubPaths(%s) leaves %q", tt.in, leak)
		}
	}
}
