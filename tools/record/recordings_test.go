package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/tools/record/internal/manifest"
	"github.com/agentwire/agentwire/tools/record/internal/sandbox"
)

const recordings = "../../testdata/recordings"

// sets are the recording sets the manifest must cover, each for every
// scenario; tapSets hold tap lines ({"dir","msg"}) rather than bare frames.
var (
	sets    = []string{"codex-exec", "codex-app-server", "codex-rollout", "claude-stream", "claude-stream-partial", "claude-control", "claude-log", "gemini-stream", "acp-gemini", "acp-claude-code"}
	tapSets = []string{"codex-app-server", "claude-control", "acp-gemini", "acp-claude-code"}
)

// TestManifest checks the committed recordings against their manifest:
// every set has a row for every scenario (a recording, or a reason it
// cannot exist), every recording parses line by line and has the frame
// count the manifest says, tap recordings have a direction on every line,
// no file is unlisted, and no scratch path leaked.
func TestManifest(t *testing.T) {
	t.Parallel()

	entries, err := manifest.Read(filepath.Join(recordings, "MANIFEST.tsv"))
	if err != nil {
		t.Fatalf("read manifest: %v", err)
	}
	listed := map[string]bool{}
	covered := map[string]bool{}
	for _, e := range entries {
		if !slices.Contains(sets, e.Set) {
			t.Errorf("manifest: unknown set %q", e.Set)
		}
		if !slices.Contains(manifest.ScenariosOf(e.Set), e.Scenario) {
			t.Errorf("manifest: %s: unknown scenario %q", e.Set, e.Scenario)
		}
		covered[e.Set+"/"+e.Scenario] = true
		if e.Program == "" || !strings.Contains(e.Program, "@") {
			t.Errorf("manifest: %s/%s: program must be name@version, got %q", e.Set, e.Scenario, e.Program)
		}
		if e.File == "-" {
			if !strings.HasPrefix(e.Note, "unsupported:") || len(e.Note) < len("unsupported: x") {
				t.Errorf("manifest: %s/%s has no recording and no reason", e.Set, e.Scenario)
			}
			continue
		}
		listed[e.File] = true
		if !strings.HasPrefix(e.File, e.Set+"/") {
			t.Errorf("manifest: %s is not in its set's directory %s/", e.File, e.Set)
		}
		if strings.Contains(e.Command, "rec-") {
			t.Errorf("manifest: %s: command leaks a scratch path: %s", e.File, e.Command)
		}
		checkRecording(t, e, slices.Contains(tapSets, e.Set))
	}
	for _, set := range sets {
		for _, sc := range manifest.ScenariosOf(set) {
			if !covered[set+"/"+sc] {
				t.Errorf("manifest: no row for %s/%s", set, sc)
			}
		}
	}
	err = filepath.WalkDir(recordings, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "MANIFEST.tsv" {
			return err
		}
		rel, _ := filepath.Rel(recordings, path)
		if !listed[filepath.ToSlash(rel)] {
			t.Errorf("%s is not in the manifest", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func checkRecording(t *testing.T, e manifest.Entry, tapLines bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(recordings, e.File))
	if err != nil {
		t.Errorf("%s: %v", e.File, err)
		return
	}
	if bytes.Contains(b, []byte("/rec-")) && !bytes.Contains(b, []byte(sandbox.Placeholder)) {
		t.Errorf("%s: a scratch path leaked into the recording", e.File)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if !json.Valid(line) {
			t.Errorf("%s:%d: not JSON", e.File, n)
			continue
		}
		if tapLines {
			var tl struct {
				Dir string          `json:"dir"`
				Msg json.RawMessage `json:"msg"`
			}
			if err := json.Unmarshal(line, &tl); err != nil || (tl.Dir != "agent" && tl.Dir != "client") || len(tl.Msg) == 0 {
				t.Errorf("%s:%d: not a tap line {\"dir\":\"agent\"|\"client\",\"msg\":...}", e.File, n)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Errorf("%s: %v", e.File, err)
	}
	if n != e.Frames {
		t.Errorf("%s: manifest says %d frames, the file has %d lines", e.File, e.Frames, n)
	}
	if n == 0 {
		t.Errorf("%s: empty recording", e.File)
	}
}
