// Package manifest keeps the list of recordings: which program at which
// version produced which file with which command, for which scenario.
package manifest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Header is the first line of MANIFEST.tsv.
const Header = "file\tprogram\tcommand\tscenario\tframes\tnote"

// Entry is one row. A scenario a program cannot do has File "-", Frames 0
// and a Note that starts with "unsupported:".
type Entry struct {
	// File is the recording's path relative to the manifest.
	File string
	// Program is the CLI and version, like "codex@0.171.0" or "claude-code@2.1.197".
	Program string
	// Command is the command line that produced it, scratch paths replaced.
	Command string
	// Scenario names what was scripted (plain, shell, multistep, error-500,
	// error-429, approval-allow, approval-deny, two-turns).
	Scenario string
	// Frames counts the lines of the recording.
	Frames int
	// Note says anything a reader should know.
	Note string
}

// Scenarios every program is recorded in (or says why not).
var Scenarios = []string{"plain", "shell", "multistep", "error-500", "error-429", "approval-allow", "approval-deny", "two-turns"}

func clean(s string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(s) }

// Write writes entries to path sorted by file then scenario, replacing it.
func Write(path string, entries []Entry) error {
	slices.SortFunc(entries, func(a, b Entry) int {
		if c := strings.Compare(a.Program+a.Command, b.Program+b.Command); a.File == "-" && b.File == "-" && c != 0 {
			return c
		}
		return strings.Compare(a.File+"\x00"+a.Scenario+a.Program, b.File+"\x00"+b.Scenario+b.Program)
	})
	var b bytes.Buffer
	b.WriteString(Header + "\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%d\t%s\n", clean(e.File), clean(e.Program), clean(e.Command), clean(e.Scenario), e.Frames, clean(e.Note))
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// Read parses a manifest.
func Read(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only
	sc := bufio.NewScanner(f)
	var out []Entry
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 {
			if line != Header {
				return nil, fmt.Errorf("%s:1: header must be %q", path, Header)
			}
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 6 {
			return nil, fmt.Errorf("%s:%d: want 6 columns, got %d", path, n, len(cols))
		}
		frames, err := strconv.Atoi(cols[4])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: frames: %w", path, n, err)
		}
		out = append(out, Entry{File: cols[0], Program: cols[1], Command: cols[2], Scenario: cols[3], Frames: frames, Note: cols[5]})
	}
	return out, sc.Err()
}
