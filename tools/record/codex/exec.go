package codex

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/agentwire/agentwire/tools/record/internal/manifest"
	"github.com/agentwire/agentwire/tools/record/internal/run"
	"github.com/agentwire/agentwire/tools/record/internal/tap"
)

// recordExec runs sc through `codex exec --json`, one process per prompt
// (later prompts through `exec resume` on the first run's thread), and
// records their stdout lines as they are.
func recordExec(ctx context.Context, r *run.Run, bin string, sc scenario) ([]manifest.Entry, error) {
	const set = "codex-exec"
	entry := manifest.Entry{Set: set, Scenario: sc.name, Program: program}
	if sc.execUnsupported != "" {
		entry.File, entry.Note = "-", "unsupported: "+sc.execUnsupported
		return []manifest.Entry{entry}, nil
	}
	e, err := newEnv(r, "exec-"+sc.name, sc.script)
	if err != nil {
		return nil, err
	}
	defer e.close(r)
	defer e.dumpBodies(r)

	var (
		lines    [][]byte
		commands []string
		notes    []string
		threadID string
	)
	for i, prompt := range sc.prompts {
		args := []string{"exec", "--json", "--skip-git-repo-check", "-C", e.box.Work}
		if i > 0 {
			if threadID == "" {
				return nil, errors.New("no thread id to resume from the first run")
			}
			// resume has no -C of its own: the cwd comes from the session.
			args = []string{"exec", "--json", "--skip-git-repo-check", "resume", threadID}
		}
		args = append(args, prompt)
		out, exitErr, err := runExec(ctx, r, e, bin, args)
		if err != nil {
			return nil, err
		}
		if exitErr != nil {
			notes = append(notes, fmt.Sprintf("run %d exited: %v", i+1, exitErr))
		}
		for _, l := range out {
			var ev struct {
				Type     string `json:"type"`
				ThreadID string `json:"thread_id"`
			}
			if json.Unmarshal(l, &ev) == nil && ev.Type == "thread.started" && threadID == "" {
				threadID = ev.ThreadID
			}
		}
		lines = append(lines, out...)
		cmd := "codex " + shellJoin(args)
		commands = append(commands, strings.ReplaceAll(cmd, threadID, "<thread_id>"))
	}
	entry.File = set + "/" + sc.name + ".jsonl"
	n, err := tap.WriteLines(r.Out(entry.File), lines, e.replacements())
	if err != nil {
		return nil, fmt.Errorf("write recording: %w", err)
	}
	entry.Frames = n
	entry.Command = e.scrub(strings.Join(commands, " && "))
	if len(sc.prompts) > 1 {
		notes = append(notes, "later turns via exec resume of the first run's thread; stdout of all runs concatenated")
	}
	entry.Note = joinNotes(sc.note, serverNote(e.srv), notes)
	// The same runs' rollout: a user who captures codex exec and also
	// ingests ~/.codex/sessions has both, and must see each turn once.
	ro, err := copyRollout(r, e, "codex-rollout/exec-"+sc.name+".jsonl")
	if err != nil {
		return nil, err
	}
	ro.Set, ro.Scenario, ro.Program = "codex-rollout", sc.name, program
	ro.Command = entry.Command + " (rollout file CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl)"
	ro.Note = joinNotes(sc.note, []string{"written by the codex exec runs of codex-exec/" + sc.name + ".jsonl"}, []string{sc.rolloutNote})
	return []manifest.Entry{entry, ro}, nil
}

// runExec runs one codex exec and returns its stdout lines; a non-zero
// exit is returned separately because failing turns exit non-zero on
// purpose.
func runExec(ctx context.Context, r *run.Run, e *env, bin string, args []string) ([][]byte, error, error) {
	ctx, cancel := r.WithTimeout(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = e.box.Work
	cmd.Env = e.environ()
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = prefixWriter{w: r.Log, prefix: "codex exec: "}
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("codex exec: %w", ctx.Err())
	}
	var lines [][]byte
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		l := bytes.TrimRight(sc.Bytes(), "\r")
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if !json.Valid(l) {
			return nil, nil, fmt.Errorf("codex exec wrote a non-JSON line: %q", l)
		}
		lines = append(lines, append([]byte(nil), l...))
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("read codex exec stdout: %w", err)
	}
	return lines, runErr, nil
}

// shellJoin quotes args for a readable command line in the manifest.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t'\"$`\\|&;<>()*?[]{}!#~") {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// serverNote says how the fake server was used when it matters: failed
// requests on purpose, or more requests than the script had.
func serverNote(s *server) []string {
	served, errs := s.Stats()
	var notes []string
	if errs > 0 {
		notes = append(notes, fmt.Sprintf("model server failed %d of %d requests on purpose", errs, served))
	}
	if extra := served - len(s.script); extra > 0 {
		notes = append(notes, fmt.Sprintf("codex made %d model requests beyond the script, answered \"done\"", extra))
	}
	return notes
}
