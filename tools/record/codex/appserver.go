package codex

import (
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

// recordAppServer drives `codex app-server` over stdio as a controlling
// app would: initialize, one thread, one turn/start per prompt, serving
// notifications and approval requests until each turn/completed. It
// records the tap lines, and the rollout file Codex wrote meanwhile.
func recordAppServer(ctx context.Context, r *run.Run, bin string, sc scenario) ([]manifest.Entry, error) {
	const set, rolloutSet = "codex-app-server", "codex-rollout"
	e, err := newEnv(r, "app-"+sc.name, sc.script)
	if err != nil {
		return nil, err
	}
	defer e.close(r)
	defer e.dumpBodies(r)

	ctx, cancel := r.WithTimeout(ctx)
	defer cancel()
	args := []string{"app-server", "--listen", "stdio://"}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = e.box.Work
	cmd.Env = e.environ()
	s, err := tap.Start(ctx, cmd, prefixWriter{w: r.Log, prefix: "codex app-server: "})
	if err != nil {
		return nil, err
	}
	c := &appClient{sc: sc, log: r}
	rpc := &tap.RPC{S: s, OnRequest: c.onRequest}
	convErr := c.converse(ctx, rpc, e.box.Work)
	_ = s.CloseStdin()
	waitErr := s.Wait(ctx)
	if convErr != nil {
		return nil, convErr
	}

	entry := manifest.Entry{Set: set, Scenario: sc.name, Program: program, File: set + "/" + sc.name + ".jsonl"}
	n, err := s.WriteFile(r.Out(entry.File), e.replacements())
	if err != nil {
		return nil, fmt.Errorf("write recording: %w", err)
	}
	entry.Frames = n
	entry.Command = e.scrub("codex " + shellJoin(args))
	notes := serverNote(e.srv)
	if c.approvals > 0 {
		notes = append(notes, fmt.Sprintf("%d command approval request(s) answered %q", c.approvals, sc.approve))
	}
	notes = append(notes, c.unanswered...)
	for i, st := range c.turnStatus {
		if st != "completed" {
			notes = append(notes, fmt.Sprintf("turn %d ended %s", i+1, st))
		}
	}
	if waitErr != nil && ctx.Err() == nil {
		notes = append(notes, fmt.Sprintf("app-server exited after stdin closed: %v", waitErr))
	}
	for _, l := range s.Lines() {
		if strings.Contains(string(l), `"configWarning"`) {
			notes = append(notes, "contains a configWarning")
			break
		}
	}
	entry.Note = joinNotes(sc.note, notes)
	entries := []manifest.Entry{entry}

	ro, err := copyRollout(r, e, rolloutSet+"/"+sc.name+".jsonl")
	if err != nil {
		return entries, err
	}
	ro.Set, ro.Scenario, ro.Program = rolloutSet, sc.name, program
	ro.Note = joinNotes(sc.note, []string{"written by the app-server run of codex-app-server/" + sc.name + ".jsonl"}, []string{sc.rolloutNote})
	ro.Command = entry.Command + " (rollout file CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl)"
	return append(entries, ro), nil
}

// appClient is the recorder's side of one app-server conversation.
type appClient struct {
	sc  scenario
	log *run.Run

	approvals  int
	unanswered []string
	turnStatus []string
}

func (c *appClient) converse(ctx context.Context, rpc *tap.RPC, cwd string) error {
	if _, err := rpc.Call(ctx, "initialize", map[string]any{
		"clientInfo":   map[string]any{"name": "agentwire-recorder", "title": "agentwire recorder", "version": "0.0.0"},
		"capabilities": map[string]any{"experimentalApi": false},
	}); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	// initialized takes no params, and RPC.Notify always sends a params
	// member; send the bare notification ourselves.
	if err := rpc.S.Send(map[string]any{"method": "initialized"}); err != nil {
		return fmt.Errorf("initialized: %w", err)
	}
	res, err := rpc.Call(ctx, "thread/start", map[string]any{
		"cwd":            cwd,
		"approvalPolicy": "on-request",
		"sandbox":        "workspace-write",
	})
	if err != nil {
		return fmt.Errorf("thread/start: %w", err)
	}
	var started struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := json.Unmarshal(res, &started); err != nil || started.Thread.ID == "" {
		return fmt.Errorf("thread/start: no thread id in %s", res)
	}
	for i, prompt := range c.sc.prompts {
		if _, err := rpc.Call(ctx, "turn/start", map[string]any{
			"threadId": started.Thread.ID,
			"input":    []any{map[string]any{"type": "text", "text": prompt}},
		}); err != nil {
			return fmt.Errorf("turn/start %d: %w", i+1, err)
		}
		if err := rpc.Serve(ctx, func(f tap.Frame) bool {
			if f.Str("method") != "turn/completed" {
				return false
			}
			c.turnStatus = append(c.turnStatus, f.Str("params", "turn", "status"))
			return true
		}); err != nil {
			return fmt.Errorf("turn %d: %w", i+1, err)
		}
	}
	return nil
}

func (c *appClient) onRequest(method string, params map[string]any) (any, map[string]any) {
	if method == "item/commandExecution/requestApproval" && c.sc.approve != "" {
		c.approvals++
		return map[string]any{"decision": c.sc.approve}, nil
	}
	c.unanswered = append(c.unanswered, "refused server request "+method)
	logf(c.log.Log, "codex app-server: refusing server request %s\n", method)
	return nil, map[string]any{"code": -32601, "message": "not supported by the recorder"}
}

// copyRollout copies the one rollout file of the box to rel, scrubbed.
func copyRollout(r *run.Run, e *env, rel string) (manifest.Entry, error) {
	files, err := e.rollouts()
	if err != nil {
		return manifest.Entry{}, err
	}
	if len(files) != 1 {
		return manifest.Entry{}, fmt.Errorf("want one rollout file, found %d", len(files))
	}
	lines, err := tap.ReadLines(files[0])
	if err != nil {
		return manifest.Entry{}, fmt.Errorf("read rollout: %w", err)
	}
	for i, l := range lines {
		if !json.Valid(l) {
			return manifest.Entry{}, fmt.Errorf("rollout line %d is not JSON", i+1)
		}
	}
	if len(lines) == 0 {
		return manifest.Entry{}, errors.New("empty rollout")
	}
	n, err := tap.WriteLines(r.Out(rel), lines, e.replacements())
	if err != nil {
		return manifest.Entry{}, fmt.Errorf("write rollout: %w", err)
	}
	return manifest.Entry{File: rel, Frames: n}, nil
}
