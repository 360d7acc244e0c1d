// Package codex records the Codex CLI (codex exec --json, codex app-server
// and the rollout files both write) against a fake Responses API server.
package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentwire/agentwire/tools/record/internal/manifest"
	"github.com/agentwire/agentwire/tools/record/internal/run"
	"github.com/agentwire/agentwire/tools/record/internal/sandbox"
	"github.com/agentwire/agentwire/tools/record/internal/script"
)

const (
	program = "codex@0.171.0"
	// provider is the model_providers key; the name shows up in
	// recordings (thread/started modelProvider, session_meta).
	provider  = "fakeopenai"
	apiKeyEnv = "FAKE_OPENAI_API_KEY"
)

// scenario is one scripted conversation: the user prompts (one per turn)
// and the model's replies across all turns.
type scenario struct {
	name    string
	prompts []string
	script  script.Script
	// approve is the decision the app-server client gives to command
	// approval requests ("" when none are expected).
	approve string
	// execUnsupported says why codex exec cannot record this scenario.
	execUnsupported string
	// note goes into every manifest row of the scenario; rolloutNote only
	// into the codex-rollout row.
	note, rolloutNote string
}

// env is one scenario's prepared world: its scratch box with CODEX_HOME
// and the fake model server it talks to.
type env struct {
	box  *sandbox.Box
	srv  *server
	home string // CODEX_HOME
	bin  string // put first on PATH
	npm  string // the run's npm prefix, scrubbed from recordings
}

// Record records every scenario and returns the manifest entries.
func Record(ctx context.Context, r *run.Run) ([]manifest.Entry, error) {
	bin := filepath.Join(r.Module("@openai/codex-linux-x64"), "vendor", "x86_64-unknown-linux-musl", "bin", "codex")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("codex: native binary (run without -no-install?): %w", err)
	}
	var (
		entries []manifest.Entry
		errs    []error
	)
	for _, sc := range scenarios() {
		got, err := recordExec(ctx, r, bin, sc)
		entries = append(entries, got...)
		if err != nil {
			errs = append(errs, fmt.Errorf("codex-exec/%s: %w", sc.name, err))
		}
		got, err = recordAppServer(ctx, r, bin, sc)
		entries = append(entries, got...)
		if err != nil {
			errs = append(errs, fmt.Errorf("codex-app-server/%s: %w", sc.name, err))
		}
	}
	return entries, errors.Join(errs...)
}

// newEnv makes a scratch box with a CODEX_HOME whose config.toml points at
// a fresh fake server for sc.
func newEnv(r *run.Run, name string, sc script.Script) (*env, error) {
	box, err := sandbox.New(r.ScratchParent, "codex-"+name)
	if err != nil {
		return nil, fmt.Errorf("scratch box: %w", err)
	}
	srv, err := startServer(sc, r.Log)
	if err != nil {
		_ = box.Remove()
		return nil, err
	}
	// Without bwrap on PATH Codex falls back to the copy in its package and
	// says so in a configWarning; offering that same copy on PATH keeps the
	// recordings free of a warning that depends on the recording machine.
	// A symlink to it inside the scratch dir was not picked up, so the
	// package's own resources directory goes on PATH.
	resources := filepath.Join(r.Module("@openai/codex-linux-x64"), "vendor", "x86_64-unknown-linux-musl", "codex-resources")
	e := &env{box: box, srv: srv, home: filepath.Join(box.Home, ".codex"), bin: resources, npm: r.NPMDir}
	for _, d := range []string{e.home, filepath.Join(box.Root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			e.close(r)
			return nil, fmt.Errorf("scratch dirs: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.home, "config.toml"), []byte(configTOML(srv.BaseURL())), 0o644); err != nil {
		e.close(r)
		return nil, fmt.Errorf("config.toml: %w", err)
	}
	return e, nil
}

func (e *env) close(r *run.Run) {
	e.srv.Close()
	if !r.Keep {
		_ = e.box.Remove()
	} else {
		logf(r.Log, "codex: kept %s\n", e.box.Root)
	}
}

// environ is the process environment: the box's, plus CODEX_HOME, the
// dummy key, and a proxy that is the fake server itself, so any request
// Codex tries to make off loopback is logged and refused there instead of
// leaving the machine.
func (e *env) environ() []string {
	proxy := "http://" + e.srv.ln.Addr().String()
	return e.box.Env(
		// exec.Cmd keeps the last of duplicate keys, so this PATH wins.
		"PATH="+e.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"CODEX_HOME="+e.home,
		// Codex will not put its helper aliases (apply_patch, ...) in a
		// CODEX_HOME under TMPDIR, and the box makes its root TMPDIR.
		"TMPDIR="+filepath.Join(e.box.Root, "tmp"),
		apiKeyEnv+"=sk-fake-recorder",
		"HTTPS_PROXY="+proxy, "HTTP_PROXY="+proxy, "ALL_PROXY="+proxy,
		"https_proxy="+proxy, "http_proxy="+proxy, "all_proxy="+proxy,
		"no_proxy=127.0.0.1,localhost",
		"RUST_LOG=warn",
	)
}

// configTOML is the CODEX_HOME config: one custom provider on the fake
// server, few retries so error scenarios end in seconds, and every
// background feature that would phone home turned off.
func configTOML(baseURL string) string {
	return `model = "` + model + `"
model_provider = "` + provider + `"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
model_reasoning_summary = "auto"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

# Plugin, app and skill catalogues sync from github.com and chatgpt.com
# at startup; off, so nothing tries to leave loopback.
[features]
plugins = false
remote_plugin = false
apps = false
tool_suggest = false

[tools.update_plan]
enabled = true

[model_providers.` + provider + `]
name = "Fake OpenAI"
base_url = "` + baseURL + `"
wire_api = "responses"
env_key = "` + apiKeyEnv + `"
request_max_retries = 2
stream_max_retries = 2
stream_idle_timeout_ms = 20000
`
}

// rollouts returns the rollout files Codex wrote, oldest first.
func (e *env) rollouts() ([]string, error) {
	var out []string
	err := filepath.WalkDir(filepath.Join(e.home, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), ".jsonl") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find rollouts: %w", err)
	}
	return out, nil
}

// dumpBodies keeps the requests Codex made next to a kept box, to see
// which tools it offers and what it sends back.
func (e *env) dumpBodies(r *run.Run) {
	if !r.Keep {
		return
	}
	b, _ := json.MarshalIndent(e.srv.Bodies(), "", "  ")
	_ = os.WriteFile(filepath.Join(e.box.Root, "requests.json"), b, 0o644)
}

// npmPlaceholder stands for the npm prefix: Codex runs with its bundled
// resources directory on PATH, and a PATH that shows up in a recording
// must not name the recording machine.
const npmPlaceholder = "/NPM"

// replacements are the box's plus the npm prefix.
func (e *env) replacements() map[string]string {
	m := e.box.Replacements()
	m[e.npm] = npmPlaceholder
	if resolved, err := filepath.EvalSymlinks(e.npm); err == nil {
		m[resolved] = npmPlaceholder
	}
	return m
}

// scrub applies replacements to s, longest first like tap.WriteLines.
func (e *env) scrub(s string) string {
	m := e.replacements()
	froms := make([]string, 0, len(m))
	for from := range m {
		froms = append(froms, from)
	}
	sort.Slice(froms, func(i, j int) bool { return len(froms[i]) > len(froms[j]) })
	for _, from := range froms {
		s = strings.ReplaceAll(s, from, m[from])
	}
	return s
}
