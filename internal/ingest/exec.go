package ingest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// ExecSessionKey is the session key of a spawned command: "exec:" + its
// base name + ":" + the start time (RFC 3339, nanoseconds, UTC).
func ExecSessionKey(command string, start time.Time) string {
	return "exec:" + filepath.Base(command) + ":" + start.UTC().Format(time.RFC3339Nano)
}

// DiagnosticModel, DiagnosticStderr and DiagnosticExit are the
// "agentwire" values of the frames Exec and Proxy add to a session (see
// the package documentation).
const (
	DiagnosticModel  = "model"
	DiagnosticStderr = "stderr"
	DiagnosticExit   = "exit"
)

// ModelFrame is the diagnostic frame that opens a session whose command
// line names the model (ModelFromArgs).
type ModelFrame struct {
	Agentwire string `json:"agentwire"`
	Model     string `json:"model"`
}

// modelAgents are the agent CLIs whose command line ModelFromArgs reads:
// elsewhere -m means something else (python -m module).
var modelAgents = []string{"codex", "claude", "gemini", "cursor-agent"}

// agentPackages are the npm packages of those CLIs, as a package runner
// (npx, bunx, pnpx) names them.
var agentPackages = map[string]string{"@openai/codex": "codex", "@anthropic-ai/claude-code": "claude", "@google/gemini-cli": "gemini"}

// unwrapRunner is args without a package runner in front of an agent CLI
// (npx -y @openai/codex@0.171.0 exec ... reads as codex exec ...).
func unwrapRunner(args []string) []string {
	switch strings.TrimSuffix(filepath.Base(args[0]), ".cmd") {
	case "npx", "bunx", "pnpx":
	default:
		return args
	}
	for i := 1; i < len(args); i++ {
		if strings.HasPrefix(args[i], "-") {
			continue // the runner's flags (-y, --yes)
		}
		pkg := args[i]
		if at := strings.LastIndexByte(pkg, '@'); at > 0 {
			pkg = pkg[:at] // a pinned version
		}
		if name, ok := agentPackages[pkg]; ok {
			return append([]string{name}, args[i+1:]...)
		}
		return args
	}
	return args
}

// ModelFromArgs is the model an agent's command line asks for, run
// directly or through npx, bunx or pnpx: -m MODEL,
// --model MODEL, --model=MODEL, or Codex's -c model=MODEL (a TOML value,
// quoted or not); the last one wins, as in the CLIs. It is "" when the
// command is not one of the agent CLIs (modelAgents) or names no model:
// the agent then uses its configured default, which only the agent knows.
// codex exec never names its model in its output, so this is what prices
// its turns.
func ModelFromArgs(args []string) string {
	if len(args) == 0 {
		return ""
	}
	if args = unwrapRunner(args); !slices.Contains(modelAgents, strings.TrimSuffix(filepath.Base(args[0]), ".exe")) {
		return ""
	}
	model := ""
	for i := 1; i < len(args); i++ {
		a, v := args[i], ""
		switch {
		case a == "--":
			return model
		case a == "-m" || a == "--model":
			if i+1 < len(args) {
				i++
				v = args[i]
			}
		case strings.HasPrefix(a, "--model="):
			v = strings.TrimPrefix(a, "--model=")
		case a == "-c" || a == "--config":
			if i+1 < len(args) {
				i++
				v = configModel(args[i])
			}
		case strings.HasPrefix(a, "--config="):
			v = configModel(strings.TrimPrefix(a, "--config="))
		}
		if v = strings.TrimSpace(v); v != "" {
			model = v
		}
	}
	return model
}

// configModel is the model of a Codex -c key=value override, "" for
// another key.
func configModel(kv string) string {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || strings.TrimSpace(k) != "model" {
		return ""
	}
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	return v
}

// modelFrame is the model frame of args, nil when they name no model.
func modelFrame(args []string) []byte {
	m := ModelFromArgs(args)
	if m == "" {
		return nil
	}
	b, _ := json.Marshal(ModelFrame{Agentwire: DiagnosticModel, Model: m}) //nolint:errchkjson // strings only: cannot fail
	return b
}

// StderrFrame is the diagnostic frame of one line the command wrote on its
// standard error. Line holds it when it is valid UTF-8, LineBase64
// otherwise, so no byte is lost.
type StderrFrame struct {
	Agentwire  string `json:"agentwire"`
	Line       string `json:"line,omitempty"`
	LineBase64 string `json:"lineBase64,omitempty"`
}

// ExitFrame is the diagnostic frame that ends an exec session: the exit
// code (128+n when killed by signal n, as shells report it), the signal's
// name when there was one, and the error when the command could not be
// waited for.
type ExitFrame struct {
	Agentwire string `json:"agentwire"`
	Code      int    `json:"code"`
	Signal    string `json:"signal,omitempty"`
	Error     string `json:"error,omitempty"`
}

func stderrFrame(line []byte) []byte {
	f := StderrFrame{Agentwire: DiagnosticStderr}
	if utf8.Valid(line) {
		f.Line = string(line)
	} else {
		f.LineBase64 = base64.StdEncoding.EncodeToString(line)
	}
	b, _ := json.Marshal(f) //nolint:errchkjson // strings only: cannot fail
	return b
}

// ExecOptions say what Exec runs.
type ExecOptions struct {
	// Args is the command and its arguments.
	Args []string
	// Session is the session of its frames (Key "" means ExecSessionKey).
	Session Session
	// Stdin is given to the command (nil: no input).
	Stdin io.Reader
	// Signals are forwarded to the command while it runs.
	Signals <-chan os.Signal
	// KillAfter is how long the command may run on after ctx ends and it
	// was sent SIGTERM, before it is killed. Default 10 seconds.
	KillAfter time.Duration
}

// ExecResult is what Exec did.
type ExecResult struct {
	// SessionKey is the session the frames went to.
	SessionKey string
	// ExitCode is the command's exit status (128+n for signal n).
	ExitCode int
	// Frames counts the frames published, diagnostics included.
	Frames uint64
	// Stdout and Stderr count the lines of each.
	Stdout, Stderr uint64
}

type execLine struct {
	b      []byte
	stderr bool
	at     time.Time
}

// Exec runs a command and publishes its standard output lines as frames of
// one session, each standard error line as a stderr diagnostic frame of
// the same session, and its exit status as a final exit frame (see the
// package documentation). Frames are published in the order they are read,
// from one goroutine, so ordinals follow arrival. Signals from
// opts.Signals are forwarded to the command; when ctx ends the command is
// sent SIGTERM, then killed after opts.KillAfter. Everything read is
// published even after ctx ends.
func (in *Ingester) Exec(ctx context.Context, opts ExecOptions) (ExecResult, error) {
	if len(opts.Args) == 0 {
		return ExecResult{}, errors.New("exec: no command")
	}
	start := in.now()
	s := opts.Session
	if s.Key == "" {
		s.Key = ExecSessionKey(opts.Args[0], start)
	} else if _, err := in.Pub.LastOrdinal(ctx, s.Key); err != nil {
		// A session named by the caller may already hold frames of an
		// earlier run: numbered from 1 again, this run's frames would be
		// taken for those and dropped.
		return ExecResult{SessionKey: s.Key}, fmt.Errorf("exec: where session %s ends in RAW: %w", s.Key, err)
	}
	res := ExecResult{SessionKey: s.Key}
	killAfter := opts.KillAfter
	if killAfter == 0 {
		killAfter = 10 * time.Second
	}

	// Not ctx: ending ctx sends SIGTERM (below), not SIGKILL.
	cmd := exec.CommandContext(context.WithoutCancel(ctx), opts.Args[0], opts.Args[1:]...) //nolint:gosec // running the user's command is the point
	cmd.Stdin = opts.Stdin
	setProcessGroup(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return res, fmt.Errorf("exec %s: %w", opts.Args[0], err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return res, fmt.Errorf("exec %s: %w", opts.Args[0], err)
	}
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("exec: %w", err)
	}
	in.Log.Info("started", "command", opts.Args[0], "pid", cmd.Process.Pid, "session", s.Key, "dialect", s.Dialect)

	// Publishing goes on after ctx ends: what the command wrote is kept.
	pctx := context.WithoutCancel(ctx)
	var pubErr error
	if b := modelFrame(opts.Args); b != nil {
		if _, err := in.Pub.Publish(pctx, Frame{SessionKey: s.Key, Dialect: s.Dialect, Provider: in.Provider, Bytes: b, ReceivedAt: start}); err != nil {
			pubErr = fmt.Errorf("session %s: %w", s.Key, err)
		} else {
			res.Frames++
		}
	}
	lines := make(chan execLine, 256)
	var readers sync.WaitGroup
	read := func(r io.Reader, isErr bool) {
		defer readers.Done()
		err := ReadLines(pctx, r, func(line []byte) error {
			lines <- execLine{b: line, stderr: isErr, at: in.now()}
			return nil
		})
		if err != nil {
			in.Log.Warn("reading the command's output failed", "stderr", isErr, "err", err)
			_, _ = io.Copy(io.Discard, r) // let the command finish
		}
	}
	readers.Add(2)
	go read(stdout, false)
	go read(stderr, true)
	go func() { readers.Wait(); close(lines) }()

	waited := make(chan error, 1)
	published := make(chan struct{})
	stopReleasing := in.releaseHeld(pctx)
	go func() {
		defer close(published)
		defer stopReleasing()
		for l := range lines {
			if pubErr != nil {
				continue // drain so the command is not blocked
			}
			b := l.b
			if l.stderr {
				b = stderrFrame(l.b)
				res.Stderr++
			} else {
				res.Stdout++
			}
			if _, err := in.Pub.Publish(pctx, Frame{SessionKey: s.Key, Dialect: s.Dialect, Provider: in.Provider, Bytes: b, ReceivedAt: l.at}); err != nil {
				pubErr = fmt.Errorf("session %s: %w", s.Key, err)
				continue
			}
			res.Frames++
		}
		// The pipes are closed: wait for the command.
		waited <- cmd.Wait()
	}()

	var waitErr error
	ctxDone := ctx.Done()
	var kill <-chan time.Time
loop:
	for {
		select {
		case sig := <-opts.Signals:
			in.Log.Info("forwarding signal", "signal", sig)
			_ = cmd.Process.Signal(sig) // it may have exited already
		case <-ctxDone:
			ctxDone = nil
			_ = cmd.Process.Signal(syscall.SIGTERM)
			kill = time.After(killAfter)
		case <-kill:
			in.Log.Warn("the command did not stop; killing it", "after", killAfter)
			_ = cmd.Process.Kill()
		case waitErr = <-waited:
			break loop
		}
	}
	<-published

	exit := exitFrame(cmd.ProcessState, waitErr)
	res.ExitCode = exit.Code
	b, _ := json.Marshal(exit) //nolint:errchkjson // plain struct: cannot fail
	if pubErr == nil {
		if _, err := in.Pub.Publish(pctx, Frame{SessionKey: s.Key, Dialect: s.Dialect, Provider: in.Provider, Bytes: b, ReceivedAt: in.now()}); err != nil {
			pubErr = fmt.Errorf("session %s: %w", s.Key, err)
		} else {
			res.Frames++
		}
	}
	fctx, cancel := flushContext(ctx)
	defer cancel()
	if err := in.Pub.Flush(fctx); err != nil && pubErr == nil {
		pubErr = fmt.Errorf("flush: %w", err)
	}
	in.Log.Info("command exited", "code", exit.Code, "signal", exit.Signal, "frames", res.Frames, "stdout", res.Stdout, "stderr", res.Stderr)
	return res, pubErr
}

func exitFrame(ps *os.ProcessState, waitErr error) ExitFrame {
	f := ExitFrame{Agentwire: DiagnosticExit, Code: -1}
	if ps != nil {
		f.Code = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			f.Signal = signalName(ws.Signal())
			f.Code = 128 + int(ws.Signal())
		}
	}
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) {
		f.Error = waitErr.Error()
	}
	return f
}
