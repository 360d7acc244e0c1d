package adapter

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// DiagnosticVersion is the mapping version of the events Diagnostic maps,
// whatever the dialect: ingest writes these frames, not the agent, so
// their mapping is one for every dialect, versioned on its own.
const DiagnosticVersion = "agentwire-diagnostic/3"

const diagnosticSource = "agentwire.diagnostic"

// diagnosticPrefix is how every diagnostic frame starts: ingest writes
// them compact with "agentwire" first, and no agent's frame starts so.
var diagnosticPrefix = []byte(`{"agentwire":`)

// IsDiagnostic says whether f is a frame ingest added (Diagnostic).
func IsDiagnostic(f Frame) bool { return bytes.HasPrefix(f.Bytes, diagnosticPrefix) }

// DiagnosticRules document the diagnostic frames in every dialect's
// mapping table.
var DiagnosticRules = Rules{
	{Kind: "agentwire:stderr", Emits: []canonical.Kind{canonical.KindRuntimeWarning},
		Note: "written by `ingest exec` and `ingest proxy` for each line the agent wrote on standard error: runtime.warning with the line as its message (its first 1000 bytes; all of it in raw, base64 when it is not UTF-8), detail.stream = stderr. Mapping version " + DiagnosticVersion + ", the same for every dialect"},
	{Kind: "agentwire:model", Emits: []canonical.Kind{canonical.KindSessionConfigured},
		Note: "written by `ingest exec` and `ingest proxy` first, when the command is codex, claude, gemini or cursor-agent and its arguments name a model (`-m`, `--model`, `-c model=`): session.configured with config.model, so the turns of an agent that never names its model (codex exec) are priced. A later model the agent names itself replaces it. Mapping version " + DiagnosticVersion},
	{Kind: "agentwire:exit", Emits: []canonical.Kind{canonical.KindRuntimeError, canonical.KindItemCompleted, canonical.KindTurnCompleted, canonical.KindSessionExited},
		Note: "written by `ingest exec` and `ingest proxy` when the agent's process ended: session.exited with exitCode. Status 0, or killed by SIGINT or SIGTERM (a stop asked for): exitKind graceful. Any other status, another signal, or a status that could not be read: a runtime.error (class unknown) first, exitKind error. Before session.exited, every item the session's events started and did not complete is completed as failed (detail: the agent exited before the item ended, and why), and every turn they started and did not end (turn.completed or turn.aborted) is completed as interrupted, the exit's reason as its errorMessage; neither states a text or a count. Mapping version " + DiagnosticVersion},
}

// maxDiagnosticMessage bounds the part of a standard error line a
// warning's message repeats; raw keeps the line whole.
const maxDiagnosticMessage = 1000

// Diagnostic maps a frame ingest added to an agent's session (`ingest
// exec`, `ingest proxy`; see package ingest): the model the agent's
// command line names, a line the agent wrote on standard error, or its
// exit status. ok is false for any other frame,
// which the adapter maps. The sessions call it before the adapter
// (mapDiagnostic), so that these frames read the same in every dialect and
// leave the adapter's state alone. An exit ends nothing here: the
// sessions pass their running work to diagnostic, which an exit ends.
func Diagnostic(f Frame, p canonical.Provider) (evs []canonical.Event, ok bool) {
	return diagnostic(f, p, nil)
}

// diagnostic is Diagnostic ending open, the session's running work (nil:
// none), at an exit.
func diagnostic(f Frame, p canonical.Provider, open *running) (evs []canonical.Event, ok bool) {
	if !IsDiagnostic(f) {
		return nil, false
	}
	var d struct {
		Agentwire  string `json:"agentwire"`
		Line       string `json:"line"`
		LineBase64 string `json:"lineBase64"`
		Code       *int   `json:"code"`
		Signal     string `json:"signal"`
		Error      string `json:"error"`
		Model      string `json:"model"`
	}
	if err := jsonscan.Unmarshal(f.Bytes, &d); err != nil {
		return Undecodable(f, p, DiagnosticVersion, diagnosticSource, err), true
	}
	em := NewEmitter(f, p, DiagnosticVersion, canonical.NewRaw(diagnosticSource, "", d.Agentwire, f.Bytes))
	var env canonical.Event
	switch d.Agentwire {
	case "stderr":
		msg := d.Line
		switch {
		case d.LineBase64 != "":
			msg = "a line on standard error that is not UTF-8"
		case strings.TrimSpace(msg) == "":
			msg = "an empty line on standard error"
		}
		em.Warn(env, prefix(msg, maxDiagnosticMessage), map[string]string{"stream": "stderr"})
	case "model":
		if strings.TrimSpace(d.Model) == "" {
			em.Warn(env, "a model frame that names no model", nil)
			break
		}
		model, _ := json.Marshal(d.Model) //nolint:errchkjson // a string: cannot fail
		em.Emit(env, &canonical.SessionConfigured{Config: map[string]json.RawMessage{"model": model}})
	case "exit":
		exited := exitOf(d.Code, d.Signal, d.Error)
		if exited.ExitKind == canonical.ExitError {
			em.Fail(env, canonical.ErrorClassUnknown, exited.Reason, nil)
		}
		if open != nil {
			open.end(em, exited)
		}
		em.Emit(env, exited)
	default:
		// Counted with the unmapped kinds, as a kind of a newer ingest.
		em.Warn(env, "unknown diagnostic frame "+strconv.Quote(d.Agentwire), map[string]string{"kind": "agentwire:" + d.Agentwire, "dialect": f.Dialect})
	}
	return em.Events(), true
}

// exitOf is the session.exited of an exit frame: a status of 0, or a stop
// asked for (ingest forwards SIGINT and SIGTERM to the agent), is graceful.
func exitOf(code *int, signal, waitErr string) *canonical.SessionExited {
	out := &canonical.SessionExited{ExitKind: canonical.ExitError}
	switch {
	case waitErr != "" || code == nil || *code < 0:
		out.Reason = "the agent's exit status could not be read"
		if waitErr != "" {
			out.Reason += ": " + waitErr
		}
		return out
	case signal != "":
		out.Reason = "the agent was killed by " + signal
		if signal == "SIGINT" || signal == "SIGTERM" {
			out.ExitKind, out.Reason = canonical.ExitGraceful, "the agent was stopped by "+signal
		}
	case *code == 0:
		out.ExitKind, out.Reason = canonical.ExitGraceful, "the agent exited"
	default:
		out.Reason = "the agent exited with status " + strconv.Itoa(*code)
	}
	out.ExitCode = new(*code)
	return out
}

// prefix is s cut to at most n bytes, at a character boundary.
func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
