package claudestream

import (
	"encoding/json"
	"fmt"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// system holds the members of every system subtype the mapping reads.
type system struct {
	Model          string          `json:"model"`
	Status         *string         `json:"status"`
	PermissionMode string          `json:"permissionMode"`
	CompactResult  string          `json:"compact_result"`
	CompactError   string          `json:"compact_error"`
	CompactMeta    json.RawMessage `json:"compact_metadata"`
	HookID         string          `json:"hook_id"`
	HookName       string          `json:"hook_name"`
	HookEvent      string          `json:"hook_event"`
	Output         string          `json:"output"`
	Stdout         string          `json:"stdout"`
	Stderr         string          `json:"stderr"`
	ExitCode       *int            `json:"exit_code"`
	Outcome        string          `json:"outcome"`
	TaskID         string          `json:"task_id"`
	ToolUseID      string          `json:"tool_use_id"`
	Description    string          `json:"description"`
	TaskType       string          `json:"task_type"`
	SubagentType   string          `json:"subagent_type"`
	Usage          json.RawMessage `json:"usage"`
	LastToolName   string          `json:"last_tool_name"`
	Summary        string          `json:"summary"`
	Patch          *struct {
		Status      string `json:"status"`
		Description string `json:"description"`
		Error       string `json:"error"`
	} `json:"patch"`
	Files []struct {
		Filename string `json:"filename"`
		FileID   string `json:"file_id"`
	} `json:"files"`
	Failed []struct {
		Filename string `json:"filename"`
		Error    string `json:"error"`
	} `json:"failed"`
	Attempt       int             `json:"attempt"`
	MaxRetries    int             `json:"max_retries"`
	ErrorStatus   *int            `json:"error_status"`
	Error         json.RawMessage `json:"error"`
	OriginalModel string          `json:"original_model"`
	FallbackModel string          `json:"fallback_model"`
	Content       string          `json:"content"`
	Name          string          `json:"name"`
	State         string          `json:"state"`
	Reason        string          `json:"reason"`
	Text          string          `json:"text"`
	Level         string          `json:"level"`
	ToolName      string          `json:"tool_name"`
	Message       string          `json:"message"`
	Estimated     *int64          `json:"estimated_tokens"`
}

var initDrop = []string{"type", "subtype", "uuid", "session_id"}

func mapSystem(em *adapter.Emitter, st *State, env canonical.Event, msg json.RawMessage, fr frame) {
	var s system
	if err := jsonscan.Unmarshal(msg, &s); err != nil {
		em.Fail(env, canonical.ErrorClassValidation, "system message could not be decoded: "+err.Error(), nil)
		return
	}
	t := &st.T
	switch fr.Subtype {
	case "init":
		if s.Model != "" {
			t.Model = s.Model
		}
		if fr.SessionID != "" && !st.threadSeen(fr.SessionID) {
			em.Emit(env, &canonical.ThreadStarted{ProviderThreadID: fr.SessionID})
		}
		em.Emit(env, &canonical.SessionConfigured{Config: ConfigOf(msg, initDrop...)})
	case "status":
		p := &canonical.SessionStateChanged{State: canonical.SessionStateRunning, Detail: s.PermissionMode}
		switch {
		case s.Status != nil:
			p.Reason = *s.Status
		case s.CompactResult != "":
			p.Reason = "compaction " + s.CompactResult
		default:
			p.Reason = "status cleared"
			if t.Turn == "" {
				p.State = canonical.SessionStateReady
			}
		}
		if s.CompactError != "" {
			p.Detail = s.CompactError
		}
		em.Emit(env, p)
	case "compact_boundary":
		em.Emit(env, &canonical.ThreadStateChanged{State: canonical.ThreadStateCompacted, Detail: s.CompactMeta})
	case "hook_started":
		em.Emit(env, &canonical.HookStarted{HookID: hookID(em, s.HookID), HookName: firstNonEmpty(s.HookName, "hook"), HookEvent: firstNonEmpty(s.HookEvent, "unknown")})
	case "hook_progress":
		em.Emit(env, &canonical.HookProgress{HookID: hookID(em, s.HookID), Output: s.Output, Stdout: s.Stdout, Stderr: s.Stderr})
	case "hook_response":
		out := canonical.HookOutcome(s.Outcome)
		if !out.Valid() {
			out = canonical.HookOutcomeSuccess
			if s.ExitCode != nil && *s.ExitCode != 0 {
				out = canonical.HookOutcomeError
			}
		}
		em.Emit(env, &canonical.HookCompleted{HookID: hookID(em, s.HookID), Outcome: out, Output: s.Output, Stdout: s.Stdout, Stderr: s.Stderr, ExitCode: s.ExitCode})
	case "task_started":
		em.Emit(taskEnv(em, t, env, s), &canonical.TaskStarted{TaskID: taskID(em, s.TaskID), Description: s.Description, TaskType: firstNonEmpty(s.TaskType, s.SubagentType)})
		t.startRun(s.ToolUseID)
	case "task_progress":
		em.Emit(taskEnv(em, t, env, s), &canonical.TaskProgress{TaskID: taskID(em, s.TaskID), Description: firstNonEmpty(s.Description, s.Summary), Usage: nullable(s.Usage), LastToolName: s.LastToolName})
	case "task_updated":
		// A patch of the task; a terminal status is reported again by
		// task_notification, which is where task.completed comes from.
		desc := ""
		if s.Patch != nil {
			desc = firstNonEmpty(s.Patch.Description, s.Patch.Error, s.Patch.Status)
		}
		em.Emit(taskEnv(em, t, env, s), &canonical.TaskProgress{TaskID: taskID(em, s.TaskID), Description: desc})
	case "task_notification":
		status := canonical.TaskStatus(s.Status0())
		if !status.Valid() {
			status = canonical.TaskStatusCompleted
		}
		em.Emit(taskEnv(em, t, env, s), &canonical.TaskCompleted{TaskID: taskID(em, s.TaskID), Status: status, Summary: s.Summary, Usage: nullable(s.Usage)})
		t.endRun(s.ToolUseID)
		if t.FirstMsg != "" {
			st.NotifiedIn = t.Turn
		}
	case "background_tasks_changed":
		em.Emit(env, &canonical.TaskProgress{TaskID: "background", Description: "background tasks changed"})
	case "files_persisted":
		p := &canonical.FilesPersisted{Files: []canonical.PersistedFile{}}
		for _, f := range s.Files {
			p.Files = append(p.Files, canonical.PersistedFile{Filename: firstNonEmpty(f.Filename, "?"), FileID: firstNonEmpty(f.FileID, "?")})
		}
		for _, f := range s.Failed {
			p.Failed = append(p.Failed, canonical.FailedFile{Filename: firstNonEmpty(f.Filename, "?"), Error: firstNonEmpty(f.Error, "failed")})
		}
		em.Emit(env, p)
	case "api_retry":
		status := ""
		if s.ErrorStatus != nil {
			status = fmt.Sprintf(" (HTTP %d)", *s.ErrorStatus)
		}
		em.Warn(env, fmt.Sprintf("API request failed%s, retrying: attempt %d of %d", status, s.Attempt, s.MaxRetries), msg)
	case "control_request_progress":
		em.Emit(env, &canonical.SessionStateChanged{State: canonical.SessionStateRunning, Reason: "control_request_progress", Detail: s.Status0()})
	case "model_refusal_fallback":
		em.Emit(env, &canonical.ModelRerouted{FromModel: firstNonEmpty(s.OriginalModel, "unknown"), ToModel: firstNonEmpty(s.FallbackModel, "unknown"), Reason: "refusal"})
		if s.FallbackModel != "" {
			t.Model = s.FallbackModel
		}
	case "model_refusal_no_fallback":
		em.Fail(env, canonical.ErrorClassProvider, firstNonEmpty(s.Content, "the model refused and no fallback model is configured"), msg)
	case "local_command_output":
		LocalCommand(em, env, s.Content)
	case "plugin_install":
		st := s.Status0()
		if st == "failed" {
			em.Emit(env, &canonical.ConfigWarning{Summary: "plugin install failed: " + firstNonEmpty(s.Name, "?"), Details: errorCode(s.Error)})
			return
		}
		em.Emit(env, &canonical.SessionConfigured{Config: map[string]json.RawMessage{"pluginInstall": msg}})
	case "thinking_tokens":
		detail := ""
		if s.Estimated != nil {
			detail = fmt.Sprintf("about %d thinking tokens", *s.Estimated)
		}
		em.Emit(env, &canonical.SessionStateChanged{State: canonical.SessionStateRunning, Reason: "thinking", Detail: detail})
	case "session_state_changed":
		state := map[string]canonical.SessionState{"idle": canonical.SessionStateReady, "running": canonical.SessionStateRunning, "requires_action": canonical.SessionStateWaiting}[s.State]
		if state == "" {
			state = canonical.SessionStateRunning
		}
		em.Emit(env, &canonical.SessionStateChanged{State: state, Reason: s.State})
	case "worker_shutting_down":
		yes := true
		em.Emit(env, &canonical.SessionExited{Reason: firstNonEmpty(s.Reason, "worker shutting down"), Recoverable: &yes, ExitKind: canonical.ExitGraceful})
	case "commands_changed":
		em.Emit(env, &canonical.SessionConfigured{Config: ConfigOf(msg, initDrop...)})
	case "notification":
		em.Emit(env, &canonical.SessionStateChanged{State: stateOf(t), Reason: "notification", Detail: s.Text})
	case "memory_recall":
		em.Emit(env, &canonical.SessionConfigured{Config: map[string]json.RawMessage{"memoryRecall": msg}})
	case "elicitation_complete":
		em.Emit(env, &canonical.UserInputResolved{Answers: msg})
	case "permission_denied":
		// Denied without asking the host (-p outside --allowedTools): an
		// approval that was needed and refused.
		e := env
		e.RequestID = em.IDs().Native(canonical.EntityRequest, t.Session, "permission", s.ToolUseID)
		e.ProviderRefs.ProviderRequestID = s.ToolUseID
		rt := ApprovalType(s.ToolName)
		em.Emit(e, &canonical.RequestOpened{RequestType: rt, Detail: s.ToolName})
		em.Emit(e, &canonical.RequestResolved{RequestType: rt, Decision: "deny", Resolution: msg})
	case "mirror_error":
		em.Warn(env, "session mirror failed: "+errorCode(s.Error), msg)
	case "informational":
		if s.Level == "warning" {
			em.Warn(env, firstNonEmpty(s.Content, "warning"), msg)
			return
		}
		em.Emit(env, &canonical.SessionStateChanged{State: stateOf(t), Reason: "informational", Detail: s.Content})
	case "session_writes_lost":
		em.Fail(env, canonical.ErrorClassUnknown, "the CLI lost writes to the session transcript", msg)
	default:
		adapter.Unmapped(em, env, "system:"+fr.Subtype)
	}
}

// Status0 is the status member when it is a string.
func (s system) Status0() string {
	if s.Status == nil {
		return ""
	}
	return *s.Status
}

func stateOf(t *Transcript) canonical.SessionState {
	if t.Turn != "" {
		return canonical.SessionStateRunning
	}
	return canonical.SessionStateReady
}

func (st *State) threadSeen(session string) bool {
	if contains(st.Threads, session) {
		return true
	}
	st.Threads = append(st.Threads, session)
	return false
}

func hookID(em *adapter.Emitter, id string) string {
	if id != "" {
		return id
	}
	return em.IDs().Derived(canonical.EntityEvent, em.Frame().Ordinal, 99)
}

func taskID(em *adapter.Emitter, id string) string {
	if id != "" {
		return id
	}
	return em.IDs().Derived(canonical.EntityEvent, em.Frame().Ordinal, 98)
}

// taskEnv ties task events to the tool call that launched them.
func taskEnv(em *adapter.Emitter, t *Transcript, env canonical.Event, s system) canonical.Event {
	if turn := t.runTurn(s.ToolUseID); turn != "" {
		env.TurnID = turn // a background run's, after the turn that launched it
	}
	if s.ToolUseID != "" && t.openTool(s.ToolUseID) >= 0 {
		env.ItemID, env.ProviderRefs.ProviderItemID = t.ToolItemID(em, s.ToolUseID), s.ToolUseID
	}
	return env
}

func nullable(r json.RawMessage) json.RawMessage {
	if len(r) == 0 || string(r) == "null" {
		return nil
	}
	return r
}

// LocalCommand maps a local slash command's output (/clear, /model: run by
// the CLI, not the model): a completed command_execution item titled
// "local command", run by the user, with the output as its command_output.
// The session log writes the same as system:local_command lines.
func LocalCommand(em *adapter.Emitter, env canonical.Event, output string) {
	env.ItemID = em.IDs().Derived(canonical.EntityItem, em.Frame().Ordinal, 0)
	p := canonical.ItemLifecycle{ItemType: canonical.ItemTypeCommandExecution, Status: canonical.ItemStatusCompleted, Title: "local command", ByUser: true}
	if output != "" {
		p.Content = map[canonical.StreamKind]string{canonical.StreamCommandOutput: output}
	}
	em.Finished(env, p)
}
