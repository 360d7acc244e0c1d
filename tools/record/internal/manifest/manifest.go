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
const Header = "set\tscenario\tfile\tprogram\tcommand\tframes\tnote"

// Entry is one row. A scenario a program cannot do has File "-", Frames 0
// and a Note that starts with "unsupported:" and says why.
type Entry struct {
	// Set names the recording set: the directory the files are in, one per
	// program and mode (codex-exec, claude-stream-partial, acp-gemini, ...).
	// Its first word before "-" is the recorder that writes it.
	Set string
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

// OwnScenarios are recorded by one program's sets alone (the sets whose
// name starts with the key and a dash), after Scenarios: what only that
// program does.
var OwnScenarios = map[string][]string{
	// A sub-agent (the Task tool) on a model of its own, with its
	// transcript; then one in the background, whose notification starts a
	// turn of its own.
	"claude": {"subagent", "subagent-background"},
}

// ScenariosOf are the scenarios a set is recorded in.
func ScenariosOf(set string) []string {
	program, _, _ := strings.Cut(set, "-")
	return slices.Concat(Scenarios, OwnScenarios[program])
}

func clean(s string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(s) }

// Write writes entries to path sorted by set, then scenario in the order of
// Scenarios, replacing the file.
func Write(path string, entries []Entry) error {
	rank := func(s string) int {
		if i := slices.Index(Scenarios, s); i >= 0 {
			return i
		}
		return len(Scenarios)
	}
	slices.SortFunc(entries, func(a, b Entry) int {
		if c := strings.Compare(a.Set, b.Set); c != 0 {
			return c
		}
		if c := rank(a.Scenario) - rank(b.Scenario); c != 0 {
			return c
		}
		return strings.Compare(a.Scenario+a.File, b.Scenario+b.File)
	})
	var b bytes.Buffer
	b.WriteString(Header + "\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", clean(e.Set), clean(e.Scenario), clean(e.File), clean(e.Program), clean(e.Command), e.Frames, clean(e.Note))
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
		if len(cols) != 7 {
			return nil, fmt.Errorf("%s:%d: want 7 columns, got %d", path, n, len(cols))
		}
		frames, err := strconv.Atoi(cols[5])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: frames: %w", path, n, err)
		}
		out = append(out, Entry{Set: cols[0], Scenario: cols[1], File: cols[2], Program: cols[3], Command: cols[4], Frames: frames, Note: cols[6]})
	}
	return out, sc.Err()
}
