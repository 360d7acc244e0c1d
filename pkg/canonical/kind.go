package canonical

// Kind is the type of a canonical runtime event, one of the 45 names of
// EVENTS.md §1.2. It is also the CloudEvents `type` attribute and the tail of
// the NATS subject (`runtime.<provider>.<kind>`). The set is closed: Kinds
// lists every value, and a test fails when a constant is missing there, in
// the payload registry, in the JSON Schemas or in testdata.
type Kind string

const (
	// KindSessionStarted marks a provider session coming up (process spawned, ACP session created).
	KindSessionStarted Kind = "session.started"
	// KindSessionConfigured reports the session's configuration: model, tools, capabilities.
	KindSessionConfigured Kind = "session.configured"
	// KindSessionStateChanged reports a new SessionState.
	KindSessionStateChanged Kind = "session.state.changed"
	// KindSessionExited marks the end of a provider session.
	KindSessionExited Kind = "session.exited"

	// KindThreadStarted marks a new conversation thread.
	KindThreadStarted Kind = "thread.started"
	// KindThreadStateChanged reports a new ThreadState (archived, compacted, ...).
	KindThreadStateChanged Kind = "thread.state.changed"
	// KindThreadMetadataUpdated reports a thread's new name or metadata.
	KindThreadMetadataUpdated Kind = "thread.metadata.updated"
	// KindThreadTokenUsageUpdated reports the thread's token usage totals.
	KindThreadTokenUsageUpdated Kind = "thread.token-usage.updated"
	// KindThreadRealtimeStarted marks the start of a realtime (voice) session on a thread.
	KindThreadRealtimeStarted Kind = "thread.realtime.started"
	// KindThreadRealtimeItemAdded carries an item of a realtime session.
	KindThreadRealtimeItemAdded Kind = "thread.realtime.item-added"
	// KindThreadRealtimeAudioDelta carries a chunk of realtime output audio.
	KindThreadRealtimeAudioDelta Kind = "thread.realtime.audio.delta"
	// KindThreadRealtimeError reports a realtime session error.
	KindThreadRealtimeError Kind = "thread.realtime.error"
	// KindThreadRealtimeClosed marks the end of a realtime session.
	KindThreadRealtimeClosed Kind = "thread.realtime.closed"

	// KindTurnStarted marks the start of a turn: one user input and the agent's work on it.
	KindTurnStarted Kind = "turn.started"
	// KindTurnCompleted marks the end of a turn with its TurnState, usage and cost.
	KindTurnCompleted Kind = "turn.completed"
	// KindTurnAborted reports a turn aborted by the provider or the user.
	KindTurnAborted Kind = "turn.aborted"
	// KindTurnPlanUpdated carries the turn's current plan (TODO list).
	KindTurnPlanUpdated Kind = "turn.plan.updated"
	// KindTurnDiffUpdated carries the turn's aggregated unified diff.
	KindTurnDiffUpdated Kind = "turn.diff.updated"

	// KindItemStarted marks the start of an item (message, tool call, reasoning, ...).
	KindItemStarted Kind = "item.started"
	// KindItemUpdated reports progress of an item.
	KindItemUpdated Kind = "item.updated"
	// KindItemCompleted marks the end of an item; its payload is authoritative.
	KindItemCompleted Kind = "item.completed"
	// KindContentDelta carries a streamed chunk of an item's content.
	KindContentDelta Kind = "content.delta"

	// KindRequestOpened marks a request from the agent to the client (approval, tool call, ...).
	KindRequestOpened Kind = "request.opened"
	// KindRequestResolved marks the client's answer to a request.
	KindRequestResolved Kind = "request.resolved"
	// KindUserInputRequested carries questions the agent asks the user.
	KindUserInputRequested Kind = "user-input.requested"
	// KindUserInputResolved carries the user's answers.
	KindUserInputResolved Kind = "user-input.resolved"

	// KindTaskStarted marks the start of a background task or sub-agent.
	KindTaskStarted Kind = "task.started"
	// KindTaskProgress reports progress of a background task.
	KindTaskProgress Kind = "task.progress"
	// KindTaskCompleted marks the end of a background task.
	KindTaskCompleted Kind = "task.completed"
	// KindHookStarted marks the start of a hook run.
	KindHookStarted Kind = "hook.started"
	// KindHookProgress carries output of a running hook.
	KindHookProgress Kind = "hook.progress"
	// KindHookCompleted marks the end of a hook run with its outcome.
	KindHookCompleted Kind = "hook.completed"
	// KindToolProgress reports that a tool call is still running.
	KindToolProgress Kind = "tool.progress"
	// KindToolSummary carries a provider's summary of preceding tool calls.
	KindToolSummary Kind = "tool.summary"
	// KindAuthStatus reports authentication progress or failure.
	KindAuthStatus Kind = "auth.status"
	// KindAccountUpdated reports a change of the account (auth mode, plan).
	KindAccountUpdated Kind = "account.updated"
	// KindAccountRateLimitsUpdated reports a rate-limit observation.
	KindAccountRateLimitsUpdated Kind = "account.rate-limits.updated"
	// KindMCPStatusUpdated reports the status of MCP servers.
	KindMCPStatusUpdated Kind = "mcp.status.updated"
	// KindMCPOAuthCompleted reports the end of an MCP server OAuth login.
	KindMCPOAuthCompleted Kind = "mcp.oauth.completed"
	// KindModelRerouted reports that the provider switched models.
	KindModelRerouted Kind = "model.rerouted"
	// KindConfigWarning reports a problem in the agent's configuration.
	KindConfigWarning Kind = "config.warning"
	// KindDeprecationNotice reports a deprecation announced by the provider.
	KindDeprecationNotice Kind = "deprecation.notice"
	// KindFilesPersisted reports files uploaded to the provider's backend.
	KindFilesPersisted Kind = "files.persisted"
	// KindRuntimeWarning reports something noteworthy that is not a failure,
	// including provider frames no mapping knows (raw attached).
	KindRuntimeWarning Kind = "runtime.warning"
	// KindRuntimeError reports a failure, including frames that could not be
	// decoded (class validation_error, raw attached).
	KindRuntimeError Kind = "runtime.error"
)

// allKinds is the private set incoming kinds are checked against; it is
// built from Kinds so the two cannot disagree.
var allKinds = func() map[Kind]struct{} {
	m := make(map[Kind]struct{}, len(Kinds()))
	for _, k := range Kinds() {
		m[k] = struct{}{}
	}
	return m
}()

// Kinds returns every event kind, in the order of EVENTS.md §1.2.
func Kinds() []Kind {
	return []Kind{
		KindSessionStarted,
		KindSessionConfigured,
		KindSessionStateChanged,
		KindSessionExited,
		KindThreadStarted,
		KindThreadStateChanged,
		KindThreadMetadataUpdated,
		KindThreadTokenUsageUpdated,
		KindThreadRealtimeStarted,
		KindThreadRealtimeItemAdded,
		KindThreadRealtimeAudioDelta,
		KindThreadRealtimeError,
		KindThreadRealtimeClosed,
		KindTurnStarted,
		KindTurnCompleted,
		KindTurnAborted,
		KindTurnPlanUpdated,
		KindTurnDiffUpdated,
		KindItemStarted,
		KindItemUpdated,
		KindItemCompleted,
		KindContentDelta,
		KindRequestOpened,
		KindRequestResolved,
		KindUserInputRequested,
		KindUserInputResolved,
		KindTaskStarted,
		KindTaskProgress,
		KindTaskCompleted,
		KindHookStarted,
		KindHookProgress,
		KindHookCompleted,
		KindToolProgress,
		KindToolSummary,
		KindAuthStatus,
		KindAccountUpdated,
		KindAccountRateLimitsUpdated,
		KindMCPStatusUpdated,
		KindMCPOAuthCompleted,
		KindModelRerouted,
		KindConfigWarning,
		KindDeprecationNotice,
		KindFilesPersisted,
		KindRuntimeWarning,
		KindRuntimeError,
	}
}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool {
	_, ok := allKinds[k]
	return ok
}

// ParseKind returns s as a Kind, or an error wrapping ErrUnknownKind.
func ParseKind(s string) (Kind, error) {
	k := Kind(s)
	if !k.Valid() {
		return "", &FieldError{Field: "type", Rule: "must be a known event type", Value: s, err: ErrUnknownKind}
	}
	return k, nil
}
