// Package acp records Agent Client Protocol sessions: this package plays the
// client (the editor) over stdio against `gemini --experimental-acp` and
// claude-code-acp, each talking to a fake model server on loopback, and
// writes every frame both ways as tap lines.
package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentwire/agentwire/tools/record/anthropic"
	"github.com/agentwire/agentwire/tools/record/gemini"
	"github.com/agentwire/agentwire/tools/record/geminiapi"
	"github.com/agentwire/agentwire/tools/record/internal/manifest"
	"github.com/agentwire/agentwire/tools/record/internal/run"
	"github.com/agentwire/agentwire/tools/record/internal/sandbox"
	"github.com/agentwire/agentwire/tools/record/internal/script"
	"github.com/agentwire/agentwire/tools/record/internal/tap"
)

// agent is one ACP agent program and how to start it against a fake model
// server serving a script.
type agent struct {
	set     string
	program string
	// command is the manifest's rendering of the command line.
	command string
	// start launches the model server and returns it with the argv and
	// environment of the agent.
	start func(r *run.Run, box *sandbox.Box, log io.Writer, s script.Script) (srv modelServer, argv, env []string, err error)
	// auth is the authenticate methodId to send, "" to skip authenticate.
	auth string
	// yolo is the session mode that runs tools without asking.
	yolo string
	// note goes into every row of the agent's set.
	note      string
	scenarios []scenario
}

// modelServer is a fake model API serving one scenario's script.
type modelServer interface {
	Close()
	// Requests counts the main requests, those that consumed the script.
	Requests() int
}

// scenario is one scripted session.
type scenario struct {
	name    string
	prompts []string
	script  script.Script
	// mode is set with session/set_mode before the first prompt ("" keeps
	// the agent's default, which asks before running tools).
	mode string
	// decide is the permission option kind chosen when asked.
	decide string
	// wantError says session/prompt is expected to fail, errorOK that it
	// may; how each prompt ended goes in the note, and the recordings
	// tests check it.
	wantError, errorOK bool
	// wantFile and noFile name a file in the work dir the scenario's tool
	// call must have written, or must not have.
	wantFile, noFile string
	unsupported      string
	note             string
}

// Record records every scenario of both agents, concurrently, and returns
// the manifest entries.
func Record(ctx context.Context, r *run.Run) ([]manifest.Entry, error) {
	var (
		mu      sync.Mutex
		entries []manifest.Entry
		errs    []error
		wg      sync.WaitGroup
	)
	for _, a := range []agent{geminiAgent(r), claudeAgent(r)} {
		for _, sc := range a.scenarios {
			if sc.unsupported != "" {
				entries = append(entries, manifest.Entry{Set: a.set, Scenario: sc.name, File: "-", Program: a.program, Note: sc.unsupported})
				continue
			}
			wg.Go(func() {
				e, err := recordOne(ctx, r, a, sc)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, fmt.Errorf("%s %s: %w", a.set, sc.name, err))
					return
				}
				entries = append(entries, e)
			})
		}
	}
	wg.Wait()
	return entries, errors.Join(errs...)
}

func geminiAgent(r *run.Run) agent {
	a := agent{
		set:     "acp-gemini",
		program: gemini.Program,
		command: "gemini --experimental-acp -m " + gemini.Model,
		auth:    "gemini-api-key",
		yolo:    "yolo",
		note:    "settings general.maxAttempts=1",
		start: func(r *run.Run, box *sandbox.Box, log io.Writer, s script.Script) (modelServer, []string, []string, error) {
			srv, err := geminiapi.Start(log, s)
			if err != nil {
				return nil, nil, nil, err
			}
			env, err := gemini.Prepare(box, srv.URL())
			if err != nil {
				srv.Close()
				return nil, nil, nil, err
			}
			return srv, []string{"node", gemini.Bin(r), "--experimental-acp", "-m", gemini.Model}, env, nil
		},
	}
	a.scenarios = scenarios(tools{
		shell: func(cmd, desc string) script.ToolCall {
			b, _ := json.Marshal(map[string]string{"command": cmd, "description": desc}) // strings always marshal
			return script.ToolCall{Name: "run_shell_command", Args: string(b)}
		},
		plan:     script.ToolCall{Name: "write_todos", Args: gemini.Todos},
		planNote: "Gemini CLI sends no plan update; write_todos shows as a tool_call (kind other)",
	})
	return a
}

func claudeAgent(r *run.Run) agent {
	a := agent{
		set:     "acp-claude-code",
		program: "claude-code-acp@" + run.Versions["@zed-industries/claude-code-acp"],
		command: "claude-code-acp",
		yolo:    "bypassPermissions",
		note:    "runs Claude Code " + run.Versions["@anthropic-ai/claude-code"] + " (CLAUDE_CODE_EXECUTABLE) with IS_SANDBOX=1, CLAUDE_CODE_MAX_RETRIES=0",
		start: func(r *run.Run, box *sandbox.Box, log io.Writer, s script.Script) (modelServer, []string, []string, error) {
			srv, err := anthropic.Start(log, s)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("anthropic server: %w", err)
			}
			env := box.Env(
				"ANTHROPIC_BASE_URL="+srv.URL(),
				"ANTHROPIC_API_KEY=sk-ant-fake-recorder",
				"DISABLE_TELEMETRY=1",
				"DISABLE_ERROR_REPORTING=1",
				"DISABLE_AUTOUPDATER=1",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
				// Claude Code otherwise retries 5xx and 429 with backoff
				// for minutes.
				"CLAUDE_CODE_MAX_RETRIES=0",
				// The recorder runs as root in containers, where Claude Code
				// and claude-code-acp refuse bypassPermissions unless told
				// the machine is a sandbox; the shell scenarios need it to
				// run without an approval.
				"IS_SANDBOX=1",
				// The Agent SDK bundles an older Claude Code; run the
				// pinned one the other claude recordings use.
				"CLAUDE_CODE_EXECUTABLE="+claudeBin(r),
			)
			argv := []string{"node", filepath.Join(r.Module("@zed-industries/claude-code-acp"), "dist", "index.js")}
			return srv, argv, env, nil
		},
	}
	a.scenarios = scenarios(tools{
		shell: func(cmd, desc string) script.ToolCall {
			b, _ := json.Marshal(map[string]string{"command": cmd, "description": desc}) // strings always marshal
			return script.ToolCall{Name: "Bash", Args: string(b)}
		},
		plan: script.ToolCall{Name: "TodoWrite", Args: `{"todos":[` +
			`{"content":"List the project files","status":"in_progress","activeForm":"Listing the project files"},` +
			`{"content":"Summarize what the project does","status":"pending","activeForm":"Summarizing the project"}]}`},
	})
	return a
}

func claudeBin(r *run.Run) string {
	return filepath.Join(r.Module("@anthropic-ai/claude-code-linux-x64"), "claude")
}

// tools are the agent-specific tool calls the shared scenarios make.
type tools struct {
	shell    func(cmd, desc string) script.ToolCall
	plan     script.ToolCall
	planNote string
}

func scenarios(t tools) []scenario {
	ls := t.shell("ls", "List the files in the project.")
	return []scenario{
		{
			name:    "plain",
			prompts: []string{"Say hello."},
			script:  script.Script{{Text: "Hello! How can I help you with this project today?", InputTokens: 1000, OutputTokens: 12}},
		},
		{
			name:    "shell",
			prompts: []string{"List the files in this project."},
			mode:    "yolo",
			script: script.Script{
				{Text: "I will list the files.", ToolCalls: []script.ToolCall{ls}, InputTokens: 1200, CachedTokens: 800, OutputTokens: 20},
				{Text: "The project has go.mod, main.go and README.md.", InputTokens: 1300, CachedTokens: 1000, OutputTokens: 14},
			},
		},
		{
			name:    "multistep",
			prompts: []string{"Plan the work, then list the files and summarize the project."},
			mode:    "yolo",
			note:    t.planNote,
			script: script.Script{
				{
					Thinking:  "**Planning the work**\n\nI should make a short plan, then look at the files.",
					Text:      "Here is my plan.",
					ToolCalls: []script.ToolCall{t.plan}, InputTokens: 1100, OutputTokens: 30,
				},
				{
					Thinking:  "**Listing files**\n\nNow I run ls to see the project.",
					ToolCalls: []script.ToolCall{ls}, InputTokens: 1250, CachedTokens: 1000, OutputTokens: 15,
				},
				{Text: "The project is a tiny Go program that prints hello; it has go.mod, main.go and README.md.", InputTokens: 1400, CachedTokens: 1200, OutputTokens: 25},
			},
		},
		{
			name:      "error-500",
			prompts:   []string{"Say hello."},
			wantError: true,
			script:    script.Script{{Error: &script.HTTPError{Status: 500, Message: "Internal error encountered."}}},
			note:      "the fake API answers HTTP 500 to the first main request",
		},
		{
			name:      "error-429",
			prompts:   []string{"Say hello."},
			wantError: true,
			script:    script.Script{{Error: &script.HTTPError{Status: 429, Message: "Resource has been exhausted (e.g. check quota).", RetryAfterSeconds: 1}}},
			note:      "the fake API answers HTTP 429 RESOURCE_EXHAUSTED (Retry-After 1) to the first main request",
		},
		{
			name:     "approval-allow",
			prompts:  []string{"Write approved into approved.txt."},
			decide:   "allow_once",
			wantFile: "approved.txt",
			script: script.Script{
				{Text: "I will write the file.", ToolCalls: []script.ToolCall{t.shell("echo approved | tee approved.txt", "Write approved.txt.")}, InputTokens: 1200, OutputTokens: 20},
				{Text: "Done: approved.txt says approved.", InputTokens: 1300, CachedTokens: 1000, OutputTokens: 10},
			},
		},
		{
			name:    "approval-deny",
			prompts: []string{"Write denied into denied.txt."},
			decide:  "reject_once",
			noFile:  "denied.txt",
			// claude-code-acp denies with interrupt, which ends Claude
			// Code's turn as an error.
			errorOK: true,
			script: script.Script{
				{Text: "I will write the file.", ToolCalls: []script.ToolCall{t.shell("echo denied | tee denied.txt", "Write denied.txt.")}, InputTokens: 1200, OutputTokens: 20},
				{Text: "Understood, I did not write the file.", InputTokens: 1300, CachedTokens: 1000, OutputTokens: 10},
			},
		},
		{
			name:    "two-turns",
			prompts: []string{"Say hello.", "Now say goodbye."},
			script: script.Script{
				{Text: "Hello!", InputTokens: 1000, OutputTokens: 3},
				{Text: "Goodbye!", InputTokens: 1020, CachedTokens: 1000, OutputTokens: 3},
			},
		},
	}
}

func recordOne(ctx context.Context, r *run.Run, a agent, sc scenario) (manifest.Entry, error) {
	box, err := sandbox.New(r.ScratchParent, a.set+"-"+sc.name)
	if err != nil {
		return manifest.Entry{}, fmt.Errorf("sandbox: %w", err)
	}
	if !r.Keep {
		defer func() { _ = box.Remove() }() // scratch only
	}
	log := &prefixWriter{w: r.Log, prefix: a.set + " " + sc.name + ": "}
	srv, argv, env, err := a.start(r, box, log, sc.script)
	if err != nil {
		return manifest.Entry{}, err
	}
	defer srv.Close()

	ctx, cancel := r.WithTimeout(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = box.Work, env
	// Own process group, so the agent's children (Claude Code, shells) go
	// when the session ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s, err := tap.Start(ctx, cmd, log)
	if err != nil {
		return manifest.Entry{}, err
	}
	killGroup := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) } // already gone is fine
	defer killGroup()

	c := &client{box: box, decide: sc.decide}
	if c.decide == "" {
		c.decide = "allow_once"
	}
	rpc := &tap.RPC{S: s, JSONRPC: "2.0", OnRequest: c.onRequest}
	notes, err := converse(ctx, rpc, a, sc, box)
	if err != nil {
		return manifest.Entry{}, fmt.Errorf("%w (log: %s)", err, log.tail())
	}
	// Closing stdin is how an editor ends an ACP agent; give it a moment
	// to exit on its own before killing what is left.
	_ = s.CloseStdin()
	timer := time.AfterFunc(10*time.Second, killGroup)
	_ = s.Wait(ctx) // a killed or non-zero exit after the session is not part of the recording
	timer.Stop()

	if sc.wantFile != "" {
		if _, err := os.Stat(filepath.Join(box.Work, sc.wantFile)); err != nil {
			return manifest.Entry{}, fmt.Errorf("the approved tool call did not run: %w", err)
		}
		notes = append(notes, sc.wantFile+" was written")
	}
	if sc.noFile != "" {
		if _, err := os.Stat(filepath.Join(box.Work, sc.noFile)); err == nil {
			return manifest.Entry{}, fmt.Errorf("the rejected tool call ran: %s exists", sc.noFile)
		}
		notes = append(notes, sc.noFile+" was not written")
	}
	if got, want := srv.Requests(), len(sc.script); got != want {
		notes = append(notes, fmt.Sprintf("the agent made %d main model requests for a %d-reply script", got, want))
	}
	file := a.set + "/" + sc.name + ".jsonl"
	replace := box.Replacements()
	replace[r.NPMDir] = "/NPM"
	n, err := s.WriteFile(r.Out(file), replace)
	if err != nil {
		return manifest.Entry{}, fmt.Errorf("write %s: %w", file, err)
	}
	all := append([]string{a.note, sc.note}, notes...)
	all = append(all, c.summary())
	var kept []string
	for _, n := range all {
		if n != "" {
			kept = append(kept, n)
		}
	}
	cmdline := a.command
	if sc.mode != "" {
		cmdline += " (session/set_mode " + modeOf(a, sc) + ")"
	}
	return manifest.Entry{
		Set: a.set, Scenario: sc.name, File: file, Program: a.program, Frames: n,
		Command: box.Scrub(cmdline), Note: box.Scrub(strings.Join(kept, "; ")),
	}, nil
}

func modeOf(a agent, sc scenario) string {
	if sc.mode == "yolo" {
		return a.yolo
	}
	return sc.mode
}

// converse plays the client: initialize, authenticate, session/new, the
// mode, then each prompt until its response. It returns notes on how the
// prompts ended.
func converse(ctx context.Context, rpc *tap.RPC, a agent, sc scenario, box *sandbox.Box) ([]string, error) {
	_, err := call(ctx, rpc, "initialize", map[string]any{
		"protocolVersion":    1,
		"clientCapabilities": capabilities(),
		"clientInfo":         map[string]any{"name": "agentwire-record", "title": "agentwire recorder", "version": "0.1.0"},
	})
	if err != nil {
		return nil, err
	}
	if a.auth != "" {
		if _, err := call(ctx, rpc, "authenticate", map[string]any{"methodId": a.auth}); err != nil {
			return nil, err
		}
	}
	res, err := call(ctx, rpc, "session/new", map[string]any{"cwd": box.Work, "mcpServers": []any{}})
	if err != nil {
		return nil, err
	}
	var sess struct {
		SessionID string `json:"sessionId"`
		Modes     *struct {
			AvailableModes []struct {
				ID string `json:"id"`
			} `json:"availableModes"`
		} `json:"modes"`
	}
	if err := json.Unmarshal(res, &sess); err != nil || sess.SessionID == "" {
		return nil, fmt.Errorf("session/new: no sessionId in %s", res)
	}
	var notes []string
	if mode := modeOf(a, sc); mode != "" {
		if _, err := call(ctx, rpc, "session/set_mode", map[string]any{"sessionId": sess.SessionID, "modeId": mode}); err != nil {
			return nil, err
		}
	}
	for i, p := range sc.prompts {
		res, err := call(ctx, rpc, "session/prompt", map[string]any{
			"sessionId": sess.SessionID,
			"prompt":    []any{map[string]any{"type": "text", "text": p}},
		})
		var failure *rpcError
		switch {
		case errors.As(err, &failure) && (sc.wantError || sc.errorOK):
			notes = append(notes, fmt.Sprintf("prompt %d answered with JSON-RPC error %d", i+1, failure.Code))
			continue
		case err != nil:
			return nil, err
		}
		var out struct {
			StopReason string `json:"stopReason"`
		}
		_ = json.Unmarshal(res, &out) // a missing stopReason is noted below
		if sc.wantError {
			notes = append(notes, fmt.Sprintf("prompt %d ended with stopReason %q", i+1, out.StopReason))
		}
		if out.StopReason == "" {
			return nil, fmt.Errorf("session/prompt %d: no stopReason in %s", i+1, res)
		}
	}
	return notes, nil
}

// prefixWriter labels each line of a concurrent scenario's log and keeps
// the last lines to explain a failure.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
	last   []string
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		line, rest, ok := strings.Cut(string(p.buf), "\n")
		if !ok {
			break
		}
		p.buf = []byte(rest)
		p.last = append(p.last, line)
		if len(p.last) > 8 {
			p.last = p.last[1:]
		}
		if p.w != nil {
			if _, err := fmt.Fprintf(p.w, "%s%s\n", p.prefix, line); err != nil {
				return len(b), fmt.Errorf("log: %w", err)
			}
		}
	}
	return len(b), nil
}

func (p *prefixWriter) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.last, " | ")
}
