// Package gemini records Gemini CLI's headless stream
// (`gemini -p ... --output-format stream-json`) against the fake Gemini API
// of package geminiapi.
package gemini

import (
	"bytes"
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

	"github.com/agentwire/agentwire/tools/record/geminiapi"
	"github.com/agentwire/agentwire/tools/record/internal/manifest"
	"github.com/agentwire/agentwire/tools/record/internal/run"
	"github.com/agentwire/agentwire/tools/record/internal/sandbox"
	"github.com/agentwire/agentwire/tools/record/internal/script"
	"github.com/agentwire/agentwire/tools/record/internal/tap"
)

const (
	// Program names the CLI in manifest rows.
	Program = "gemini-cli@0.61.0"
	set     = "gemini-stream"
	// Model is a Gemini 2 model: Gemini CLI offers write_todos only to those.
	Model = "gemini-2.5-flash"
)

// Bin is the Gemini CLI entry point inside the npm prefix.
func Bin(r *run.Run) string {
	return filepath.Join(r.Module("@google/gemini-cli"), "bundle", "gemini.js")
}

// Settings is $HOME/.gemini/settings.json for a recorded run: API-key auth
// against the fake server, nothing that phones home or waits on an IDE, and
// a single attempt per model request so the error scenarios end at once
// instead of backing off for minutes.
func Settings() map[string]any {
	return map[string]any{
		"general": map[string]any{
			"enableAutoUpdate":             false,
			"enableAutoUpdateNotification": false,
			"maxAttempts":                  1,
			"retryFetchErrors":             false,
		},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false, "logPrompts": false},
		"ide":       map[string]any{"enabled": false, "hasSeenNudge": true},
		"security": map[string]any{
			"auth":        map[string]any{"selectedType": "gemini-api-key"},
			"folderTrust": map[string]any{"enabled": false},
		},
		// The fallback search needs no binary that would be fetched from
		// the network.
		"tools": map[string]any{"useRipgrep": false},
		"ui":    map[string]any{"hideTips": true, "hideBanner": true},
	}
}

// Prepare writes the settings into the box and returns the environment for
// Gemini CLI talking to baseURL.
func Prepare(box *sandbox.Box, baseURL string) ([]string, error) {
	dir := filepath.Join(box.Home, ".gemini")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("gemini settings dir: %w", err)
	}
	b, err := json.MarshalIndent(Settings(), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("gemini settings: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o644); err != nil {
		return nil, fmt.Errorf("gemini settings: %w", err)
	}
	return box.Env(
		"GOOGLE_GEMINI_BASE_URL="+baseURL,
		"GEMINI_API_KEY=fake-gemini-key",
		// The CLI otherwise re-executes itself with a bigger heap, which
		// only doubles the startup time here.
		"GEMINI_CLI_NO_RELAUNCH=true",
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"GEMINI_TELEMETRY_ENABLED=false",
	), nil
}

// scenario is one scripted conversation; unsupported says why
// `gemini -p` cannot show it.
type scenario struct {
	name string
	// prompts run one `gemini -p` each; every one after the first resumes
	// the session the first started.
	prompts     []string
	script      script.Script
	unsupported string
	note        string
}

// Shell is the run_shell_command call the shell scenarios make.
const Shell = `{"command":"ls","description":"List the files in the project."}`

// Todos is the write_todos call of the multistep scenario.
const Todos = `{"todos":[{"description":"List the project files","status":"in_progress"},{"description":"Summarize what the project does","status":"pending"}]}`

func scenarios() []scenario {
	shellReply := script.Reply{
		Text:        "I will list the files.",
		ToolCalls:   []script.ToolCall{{Name: "run_shell_command", Args: Shell}},
		InputTokens: 1200, CachedTokens: 800, OutputTokens: 20,
	}
	return []scenario{
		{
			name:    "plain",
			prompts: []string{"Say hello."},
			script:  script.Script{{Text: "Hello! How can I help you with this project today?", InputTokens: 1000, CachedTokens: 0, OutputTokens: 12}},
		},
		{
			name:    "shell",
			prompts: []string{"List the files in this project."},
			script: script.Script{
				shellReply,
				{Text: "The project has go.mod, main.go and README.md.", InputTokens: 1300, CachedTokens: 1000, OutputTokens: 14},
			},
		},
		{
			name:    "multistep",
			prompts: []string{"Plan the work, then list the files and summarize the project."},
			note:    "the scripted thoughts are not in stream-json (only thoughtsTokenCount, in total_tokens); see acp-gemini for agent_thought_chunk",
			script: script.Script{
				{
					Thinking:    "**Planning the work**\n\nI should make a short plan, then look at the files.",
					Text:        "Here is my plan.",
					ToolCalls:   []script.ToolCall{{Name: "write_todos", Args: Todos}},
					InputTokens: 1100, CachedTokens: 0, OutputTokens: 30,
				},
				{
					Thinking:    "**Listing files**\n\nNow I run ls to see the project.",
					ToolCalls:   []script.ToolCall{{Name: "run_shell_command", Args: Shell}},
					InputTokens: 1250, CachedTokens: 1000, OutputTokens: 15,
				},
				{
					Text:        "The project is a tiny Go program that prints hello; it has go.mod, main.go and README.md.",
					InputTokens: 1400, CachedTokens: 1200, OutputTokens: 25,
				},
			},
		},
		{
			name:    "error-500",
			prompts: []string{"Say hello."},
			script:  script.Script{{Error: &script.HTTPError{Status: 500, Message: "Internal error encountered."}}},
			note:    "the fake API answers HTTP 500 INTERNAL; settings general.maxAttempts=1 so the CLI does not retry",
		},
		{
			name:    "error-429",
			prompts: []string{"Say hello."},
			script:  script.Script{{Error: &script.HTTPError{Status: 429, Message: "Resource has been exhausted (e.g. check quota).", RetryAfterSeconds: 1}}},
			note:    "the fake API answers HTTP 429 RESOURCE_EXHAUSTED with RetryInfo 1s; settings general.maxAttempts=1 so the CLI does not retry",
		},
		{name: "approval-allow", unsupported: "unsupported: -p has no approval path; see acp-gemini"},
		{name: "approval-deny", unsupported: "unsupported: -p has no approval path; see acp-gemini"},
		{
			name:    "two-turns",
			prompts: []string{"Say hello.", "Now say goodbye."},
			script: script.Script{
				{Text: "Hello!", InputTokens: 1000, OutputTokens: 3},
				{Text: "Goodbye!", InputTokens: 1020, CachedTokens: 1000, OutputTokens: 3},
			},
			note: "two processes: the second runs with --resume latest and continues the first one's session; their stdout is concatenated",
		},
	}
}

// Record records every scenario, concurrently because each CLI start takes
// seconds, and returns the manifest entries.
func Record(ctx context.Context, r *run.Run) ([]manifest.Entry, error) {
	bin := Bin(r)
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("gemini: CLI not installed (run without -no-install?): %w", err)
	}
	scs := scenarios()
	entries := make([]manifest.Entry, len(scs))
	errs := make([]error, len(scs))
	var wg sync.WaitGroup
	for i, sc := range scs {
		if sc.unsupported != "" {
			entries[i] = manifest.Entry{Set: set, Scenario: sc.name, File: "-", Program: Program, Note: sc.unsupported}
			continue
		}
		wg.Go(func() {
			e, err := recordOne(ctx, r, bin, sc)
			entries[i], errs[i] = e, err
			if err != nil {
				errs[i] = fmt.Errorf("gemini %s: %w", sc.name, err)
			}
		})
	}
	wg.Wait()
	var out []manifest.Entry
	for i, e := range entries {
		if errs[i] == nil {
			out = append(out, e)
		}
	}
	return out, errors.Join(errs...)
}

func recordOne(ctx context.Context, r *run.Run, bin string, sc scenario) (manifest.Entry, error) {
	box, err := sandbox.New(r.ScratchParent, "gemini-"+sc.name)
	if err != nil {
		return manifest.Entry{}, fmt.Errorf("sandbox: %w", err)
	}
	if !r.Keep {
		defer func() { _ = box.Remove() }() // scratch only
	}
	log := &prefixWriter{w: r.Log, prefix: "gemini " + sc.name + ": "}
	srv, err := geminiapi.Start(log, sc.script)
	if err != nil {
		return manifest.Entry{}, err
	}
	defer srv.Close()
	env, err := Prepare(box, srv.URL())
	if err != nil {
		return manifest.Entry{}, err
	}
	var (
		lines    [][]byte
		commands []string
		notes    = []string{sc.note}
	)
	for i, prompt := range sc.prompts {
		args := []string{bin, "-p", prompt, "--output-format", "stream-json", "-m", Model, "--yolo"}
		if i > 0 {
			args = append(args, "--resume", "latest")
		}
		out, code, err := invoke(ctx, r, box, env, log, args)
		if err != nil {
			return manifest.Entry{}, err
		}
		if code != 0 && !strings.HasPrefix(sc.name, "error-") {
			// Only the error scenarios may fail.
			return manifest.Entry{}, fmt.Errorf("gemini exited with status %d (stdout: %.500s)", code, out)
		}
		if code != 0 {
			notes = append(notes, fmt.Sprintf("exit status %d", code))
		}
		for l := range bytes.Lines(out) {
			if l = bytes.TrimRight(l, "\r\n"); len(bytes.TrimSpace(l)) > 0 {
				lines = append(lines, l)
			}
		}
		commands = append(commands, "gemini "+shellQuote(args[1:]))
	}
	file := set + "/" + sc.name + ".jsonl"
	n, err := tap.WriteLines(r.Out(file), lines, box.Replacements())
	if err != nil {
		return manifest.Entry{}, fmt.Errorf("write %s: %w", file, err)
	}
	if got, want := srv.Requests(), len(sc.script); got != want {
		notes = append(notes, fmt.Sprintf("the CLI made %d main requests for a %d-reply script", got, want))
	}
	return manifest.Entry{
		Set: set, Scenario: sc.name, File: file, Program: Program, Frames: n,
		Note:    strings.Trim(strings.Join(notes, "; "), "; "),
		Command: box.Scrub(strings.Join(commands, " && ")),
	}, nil
}

// invoke runs Gemini CLI once and returns its stdout and exit status; err is
// for failures to run it at all (or a timeout).
func invoke(ctx context.Context, r *run.Run, box *sandbox.Box, env []string, log io.Writer, args []string) ([]byte, int, error) {
	ctx, cancel := r.WithTimeout(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir, cmd.Env = box.Work, env
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, log
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return stdout.Bytes(), 0, fmt.Errorf("run gemini: %w (stdout so far: %.500s)", ctx.Err(), stdout.String())
	case errors.As(err, &exit):
		return stdout.Bytes(), exit.ExitCode(), nil
	case err != nil:
		return nil, 0, fmt.Errorf("run gemini: %w", err)
	}
	return stdout.Bytes(), 0, nil
}

func shellQuote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'$\\;&|<>()*?!{}[]") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// prefixWriter labels each line of a concurrent scenario's log.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			break
		}
		if _, err := fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf[:i]); err != nil {
			return len(b), fmt.Errorf("log: %w", err)
		}
		p.buf = p.buf[i+1:]
	}
	return len(b), nil
}
