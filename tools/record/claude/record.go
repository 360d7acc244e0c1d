// Package claude records Claude Code against the fake Anthropic Messages
// API: its print-mode stream-json output (with and without partial
// messages), its stdin control protocol as tap lines, and the session log
// it writes under its config dir.
package claude

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentwire/agentwire/tools/record/anthropic"
	"github.com/agentwire/agentwire/tools/record/internal/manifest"
	"github.com/agentwire/agentwire/tools/record/internal/run"
	"github.com/agentwire/agentwire/tools/record/internal/sandbox"
	"github.com/agentwire/agentwire/tools/record/internal/tap"
)

const (
	program = "claude-code@2.1.197"
	// model is what the CLI asks for; the fake server answers any model.
	model = "claude-sonnet-4-5"
	// parallel bounds concurrent CLI processes: each is a large Bun binary.
	parallel = 8
)

// mode is one way of running the CLI, giving one recording set.
type mode struct {
	set string
	// partial adds --include-partial-messages (stream_event frames).
	partial bool
	// control drives the stdin control protocol and records tap lines.
	control bool
}

// cliEnv is the environment of every run besides the box's and the server's.
var cliEnv = []string{
	// Keep it off the network: no telemetry, error reports, update checks.
	"DISABLE_TELEMETRY=1",
	"DISABLE_ERROR_REPORTING=1",
	"DISABLE_AUTOUPDATER=1",
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	// The default of 10 retries with backoff makes error scenarios take
	// minutes; one retry still shows the retry frames.
	"CLAUDE_CODE_MAX_RETRIES=1",
	// TodoWrite is the plan tool the multistep scenario scripts; the
	// default task tools (TaskCreate/TaskUpdate) would replace it.
	"CLAUDE_CODE_ENABLE_TASKS=0",
}

// recordedEnv is the part of the environment that changes what the CLI
// writes, so the manifest's command shows it.
var recordedEnv = []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:PORT", "CLAUDE_CODE_MAX_RETRIES=1", "CLAUDE_CODE_ENABLE_TASKS=0"}

var modes = []mode{
	{set: "claude-stream"},
	{set: "claude-stream-partial", partial: true},
	{set: "claude-control", control: true},
}

// Record records every scenario in every mode and returns the manifest
// entries. Scenarios run concurrently, each with its own box and server.
func Record(ctx context.Context, r *run.Run) ([]manifest.Entry, error) {
	bin := filepath.Join(r.Module("@anthropic-ai/claude-code-linux-x64"), "claude")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("claude: platform binary not installed: %w", err)
	}
	type job struct {
		m  mode
		sc scenario
	}
	var jobs []job
	for _, m := range modes {
		for _, sc := range scenarios() {
			if r.Scenario != "" && sc.name != r.Scenario {
				continue
			}
			jobs = append(jobs, job{m, sc})
		}
	}
	var (
		mu      sync.Mutex
		entries []manifest.Entry
		errs    []error
		wg      sync.WaitGroup
		sem     = make(chan struct{}, parallel)
		logw    = &lockedWriter{w: r.Log}
	)
	for _, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			got, err := recordOne(ctx, r, logw, bin, j.m, j.sc)
			mu.Lock()
			defer mu.Unlock()
			entries = append(entries, got...)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s/%s: %w", j.m.set, j.sc.name, err))
			}
		})
	}
	wg.Wait()
	return entries, errors.Join(errs...)
}

// lockedWriter serializes the log lines of concurrent scenarios.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// prefixWriter prefixes each write (one log line, from the server) with
// the scenario it belongs to.
type prefixWriter struct {
	prefix string
	w      io.Writer
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	if _, err := p.w.Write(append([]byte(p.prefix), b...)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// unsupported is the entry of a scenario a mode cannot show.
func unsupported(set, scenario, why string) manifest.Entry {
	return manifest.Entry{Set: set, Scenario: scenario, File: "-", Program: program, Command: "-", Note: "unsupported: " + why}
}

func recordOne(ctx context.Context, r *run.Run, logw io.Writer, bin string, m mode, sc scenario) ([]manifest.Entry, error) {
	if !m.control && sc.approval == "allow" {
		return []manifest.Entry{unsupported(m.set, sc.name, "-p has no interactive approval: a tool outside --allowedTools is denied without asking; see claude-control")}, nil
	}
	box, err := sandbox.New(r.ScratchParent, "claude-"+strings.TrimPrefix(m.set, "claude-")+"-"+sc.name)
	if err != nil {
		return nil, fmt.Errorf("create scratch box: %w", err)
	}
	if !r.Keep {
		defer func() { _ = box.Remove() }() // a leftover temp dir is harmless
	}
	var buf bytes.Buffer
	cliLog := &lockedWriter{w: &buf}
	// The server's lines (side requests, unknown paths) go to the run log
	// as they happen; the CLI's stderr only when the run fails.
	srv, err := anthropic.Start(&prefixWriter{prefix: m.set + "/" + sc.name + ": ", w: logw}, sc.script)
	if err != nil {
		return nil, err
	}
	defer srv.Close()

	args := []string{"-p", "--output-format", "stream-json", "--verbose", "--model", model, "--allowedTools", allowedBash}
	streamIn := m.control || len(sc.prompts) > 1
	if streamIn {
		args = append(args, "--input-format", "stream-json")
	}
	if m.control {
		args = append(args, "--permission-prompt-tool", "stdio")
	}
	if m.partial {
		args = append(args, "--include-partial-messages")
	}
	if !streamIn {
		// Right after -p: --allowedTools takes every word that follows it.
		args = append([]string{"-p", sc.prompts[0]}, args[1:]...)
	}

	cctx, cancel := r.WithTimeout(ctx)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, args...)
	cmd.Dir = box.Work
	cmd.Env = box.Env(append([]string{
		"ANTHROPIC_BASE_URL=" + srv.URL(),
		"ANTHROPIC_API_KEY=sk-ant-recorder-dummy"}, cliEnv...)...)
	start := time.Now()
	s, err := tap.Start(cctx, cmd, cliLog)
	if err != nil {
		return nil, err
	}
	sessionID, driveErr := drive(cctx, s, m, sc, streamIn)
	if driveErr != nil {
		_ = s.CloseStdin() // unblock the CLI so Wait returns
	}
	waitErr := s.Wait(cctx)
	_, _ = fmt.Fprintf(logw, "claude: %s/%s: %d main requests, %s\n", m.set, sc.name, srv.Requests(), time.Since(start).Round(100*time.Millisecond))
	if driveErr != nil || (waitErr != nil && !isErrorScenario(sc)) {
		_, _ = fmt.Fprintf(logw, "claude: %s/%s: CLI log:\n%s\n", m.set, sc.name, buf.String())
		return nil, fmt.Errorf("run claude: %w", errors.Join(driveErr, waitErr))
	}

	repl := replacements(box)
	// The server's port shows up in error texts; it changes every run.
	repl[strings.TrimPrefix(srv.URL(), "http://")] = "127.0.0.1:PORT"

	var lines [][]byte
	if m.control {
		lines = s.Lines()
	} else {
		lines = agentFrames(s.Lines())
	}
	rel := filepath.Join(m.set, sc.name+".jsonl")
	n, err := tap.WriteLines(r.Out(rel), lines, repl)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", rel, err)
	}
	cmdline := scrub(strings.Join(recordedEnv, " ")+" "+commandLine(args), repl)
	entries := []manifest.Entry{{
		Set: m.set, Scenario: sc.name, File: rel, Program: program, Command: cmdline, Frames: n,
		Note: note(m, sc),
	}}
	if m.control {
		e, err := recordLog(r, box, sessionID, sc, cmdline, repl)
		entries = append(entries, e...)
		if err != nil {
			return entries, err
		}
	}
	return entries, nil
}

func isErrorScenario(sc scenario) bool { return strings.HasPrefix(sc.name, "error-") }

// drive plays the controlling app: it initializes the control protocol
// when recording it, sends the user turns (on stdin when streamIn), answers
// control requests, and returns once every turn has its result frame.
func drive(ctx context.Context, s *tap.Session, m mode, sc scenario, streamIn bool) (string, error) {
	sessionID := ""
	if m.control {
		if err := s.Send(map[string]any{
			"type": "control_request", "request_id": "rec_init_1",
			"request": map[string]any{"subtype": "initialize", "hooks": nil},
		}); err != nil {
			return "", err
		}
		// The SDK waits for this answer before the first turn; so do we.
		for {
			f, err := s.Next(ctx)
			if err != nil {
				return "", fmt.Errorf("awaiting the initialize response: %w", err)
			}
			if f.Str("type") == "control_response" && f.Str("response", "request_id") == "rec_init_1" {
				if f.Str("response", "subtype") != "success" {
					return "", fmt.Errorf("initialize failed: %s", f.Raw)
				}
				break
			}
		}
	}
	if !streamIn {
		// The prompt is on the command line; an open stdin would be read
		// as more prompt.
		_ = s.CloseStdin() // EOF is the point; a close error changes nothing
	}
	for turn, prompt := range sc.prompts {
		if streamIn {
			if err := s.Send(map[string]any{
				"type":               "user",
				"message":            map[string]any{"role": "user", "content": prompt},
				"parent_tool_use_id": nil,
				"session_id":         sessionID,
			}); err != nil {
				return sessionID, err
			}
		}
		for {
			f, err := s.Next(ctx)
			if err != nil {
				return sessionID, fmt.Errorf("turn %d: %w", turn+1, err)
			}
			if id := f.Str("session_id"); id != "" && sessionID == "" {
				sessionID = id
			}
			if f.Str("type") == "control_request" {
				if err := answer(s, f, sc); err != nil {
					return sessionID, err
				}
			}
			if f.Str("type") == "result" {
				break
			}
		}
	}
	if streamIn {
		_ = s.CloseStdin() // EOF ends the session; a close error changes nothing
	}
	return sessionID, nil
}

// answer responds to a control request from the CLI.
func answer(s *tap.Session, f tap.Frame, sc scenario) error {
	reqID := f.Str("request_id")
	req, _ := f.Obj["request"].(map[string]any)
	subtype, _ := req["subtype"].(string)
	var resp map[string]any
	switch {
	case subtype == "can_use_tool" && sc.approval == "deny":
		resp = map[string]any{"subtype": "success", "request_id": reqID, "response": map[string]any{
			"behavior": "deny", "message": "The user denied this command.",
		}}
	case subtype == "can_use_tool":
		resp = map[string]any{"subtype": "success", "request_id": reqID, "response": map[string]any{
			"behavior": "allow", "updatedInput": req["input"],
		}}
	default:
		resp = map[string]any{"subtype": "error", "request_id": reqID, "error": "the recorder does not handle " + subtype}
	}
	return s.Send(map[string]any{"type": "control_response", "response": resp})
}

// agentFrames keeps what the CLI wrote, as it wrote it: print mode has no
// client side worth recording beyond the user turns, which are in the command.
func agentFrames(lines [][]byte) [][]byte {
	var out [][]byte
	for _, l := range lines {
		if rest, ok := bytes.CutPrefix(l, []byte(`{"dir":"agent","msg":`)); ok {
			out = append(out, bytes.TrimSuffix(rest, []byte("}")))
		}
	}
	return out
}

func note(m mode, sc scenario) string {
	var parts []string
	switch {
	case m.control:
		parts = append(parts, "tap lines; client sends initialize, then user messages on stdin (stream-json), and answers can_use_tool control requests")
	case len(sc.prompts) > 1:
		parts = append(parts, "stdout as written; the two user turns go on stdin with --input-format stream-json, the second after the first result")
	default:
		parts = append(parts, "stdout as written")
	}
	switch sc.name {
	case "multistep":
		parts = append(parts, "plan tool is TodoWrite (CLAUDE_CODE_ENABLE_TASKS=0; the default is TaskCreate/TaskUpdate)")
	case "error-500", "error-429":
		parts = append(parts, "CLAUDE_CODE_MAX_RETRIES=1: the request and one retry fail")
	case "subagent-background":
		parts = append(parts, "the Task runs in the background (run_in_background): the turn ends while the sub-agent runs, and its notification starts a second turn; the fake API answers the sub-agent (haiku) and the main conversation (sonnet) each in its own order")
		if !m.control {
			parts = append(parts, "-p writes the first turn's result after the second turn's message, its modelUsage counting both turns")
		}
	case "approval-allow":
		parts = append(parts, "touch is outside --allowedTools, so the CLI asks; the client allows and the command runs")
	case "approval-deny":
		if m.control {
			parts = append(parts, "touch is outside --allowedTools, so the CLI asks; the client denies")
		} else {
			parts = append(parts, "-p without a permission prompt tool denies touch (outside --allowedTools) without asking: see permission_denials in the result")
		}
	}
	return strings.Join(parts, "; ")
}

// recordLog copies the session log the CLI wrote for the control run.
func recordLog(r *run.Run, box *sandbox.Box, sessionID string, sc scenario, cmdline string, repl map[string]string) ([]manifest.Entry, error) {
	const set = "claude-log"
	if sessionID == "" {
		return []manifest.Entry{unsupported(set, sc.name, "no session id in the stream")}, errors.New("claude-log: no session id seen")
	}
	matches, err := filepath.Glob(filepath.Join(box.Home, ".claude", "projects", "*", sessionID+".jsonl"))
	if err != nil || len(matches) == 0 {
		return []manifest.Entry{unsupported(set, sc.name, "no session log written")}, fmt.Errorf("claude-log: no log for session %s under %s", sessionID, box.Home)
	}
	// copyLog copies a log the run wrote to rel, scrubbed, as an entry.
	copyLog := func(src, rel, note string) (manifest.Entry, error) {
		lines, err := tap.ReadLines(src)
		if err != nil {
			return manifest.Entry{}, fmt.Errorf("claude-log: read %s: %w", filepath.Base(src), err)
		}
		n, err := tap.WriteLines(r.Out(rel), lines, repl)
		if err != nil {
			return manifest.Entry{}, fmt.Errorf("write %s: %w", rel, err)
		}
		return manifest.Entry{Set: set, Scenario: sc.name, File: rel, Program: program, Command: cmdline, Frames: n, Note: note}, nil
	}
	sessionLog, err := copyLog(matches[0], filepath.Join(set, sc.name+".jsonl"),
		"$HOME/.claude/projects/<project>/<session>.jsonl written by the claude-control run of this scenario")
	if err != nil {
		return nil, err
	}
	entries := []manifest.Entry{sessionLog}
	// Sub-agents' transcripts, in the order they were written. Their
	// agent ids are random; the file names number them instead.
	agents, err := filepath.Glob(filepath.Join(filepath.Dir(matches[0]), sessionID, "subagents", "agent-*.jsonl"))
	if err != nil {
		return entries, fmt.Errorf("claude-log: list sub-agent transcripts: %w", err)
	}
	sort.SliceStable(agents, func(i, j int) bool { return modTime(agents[i]).Before(modTime(agents[j])) })
	for i, a := range agents {
		e, err := copyLog(a, filepath.Join(set, fmt.Sprintf("%s.agent-%d.jsonl", sc.name, i+1)),
			"$HOME/.claude/projects/<project>/<session>/subagents/agent-<id>.jsonl, a sub-agent's transcript, written by the claude-control run of this scenario")
		if err != nil {
			return entries, err
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func modTime(path string) time.Time {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

var nonAlnum = regexp.MustCompile(`[^A-Za-z0-9]`)

// replacements extends the box's with the project directory name Claude
// Code derives from the working directory (every non-alphanumeric byte
// turned into "-"), which would otherwise leak the scratch path.
func replacements(box *sandbox.Box) map[string]string {
	repl := box.Replacements()
	for from := range box.Replacements() {
		repl[nonAlnum.ReplaceAllString(from, "-")] = nonAlnum.ReplaceAllString(sandbox.Placeholder, "-")
	}
	return repl
}

func scrub(s string, repl map[string]string) string {
	for from, to := range repl {
		s = strings.ReplaceAll(s, from, to)
	}
	return s
}

// commandLine renders args as a shell would read them, behind "claude",
// the launcher name users know (the platform binary's path is local).
func commandLine(args []string) string {
	parts := []string{"claude"}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \"'()*$\\|&;<>?") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
