package canonical

// payloadFactories maps every Kind to a constructor of its payload. A test
// checks that it covers Kinds exactly and that each payload reports the
// Kind it is registered under.
var payloadFactories = map[Kind]func() Payload{
	KindSessionStarted:           func() Payload { return new(SessionStarted) },
	KindSessionConfigured:        func() Payload { return new(SessionConfigured) },
	KindSessionStateChanged:      func() Payload { return new(SessionStateChanged) },
	KindSessionExited:            func() Payload { return new(SessionExited) },
	KindThreadStarted:            func() Payload { return new(ThreadStarted) },
	KindThreadStateChanged:       func() Payload { return new(ThreadStateChanged) },
	KindThreadMetadataUpdated:    func() Payload { return new(ThreadMetadataUpdated) },
	KindThreadTokenUsageUpdated:  func() Payload { return new(ThreadTokenUsageUpdated) },
	KindThreadRealtimeStarted:    func() Payload { return new(ThreadRealtimeStarted) },
	KindThreadRealtimeItemAdded:  func() Payload { return new(ThreadRealtimeItemAdded) },
	KindThreadRealtimeAudioDelta: func() Payload { return new(ThreadRealtimeAudioDelta) },
	KindThreadRealtimeError:      func() Payload { return new(ThreadRealtimeError) },
	KindThreadRealtimeClosed:     func() Payload { return new(ThreadRealtimeClosed) },
	KindTurnStarted:              func() Payload { return new(TurnStarted) },
	KindTurnCompleted:            func() Payload { return new(TurnCompleted) },
	KindTurnAborted:              func() Payload { return new(TurnAborted) },
	KindTurnPlanUpdated:          func() Payload { return new(TurnPlanUpdated) },
	KindTurnDiffUpdated:          func() Payload { return new(TurnDiffUpdated) },
	KindItemStarted:              func() Payload { return new(ItemStarted) },
	KindItemUpdated:              func() Payload { return new(ItemUpdated) },
	KindItemCompleted:            func() Payload { return new(ItemCompleted) },
	KindContentDelta:             func() Payload { return new(ContentDelta) },
	KindRequestOpened:            func() Payload { return new(RequestOpened) },
	KindRequestResolved:          func() Payload { return new(RequestResolved) },
	KindUserInputRequested:       func() Payload { return new(UserInputRequested) },
	KindUserInputResolved:        func() Payload { return new(UserInputResolved) },
	KindTaskStarted:              func() Payload { return new(TaskStarted) },
	KindTaskProgress:             func() Payload { return new(TaskProgress) },
	KindTaskCompleted:            func() Payload { return new(TaskCompleted) },
	KindHookStarted:              func() Payload { return new(HookStarted) },
	KindHookProgress:             func() Payload { return new(HookProgress) },
	KindHookCompleted:            func() Payload { return new(HookCompleted) },
	KindToolProgress:             func() Payload { return new(ToolProgress) },
	KindToolSummary:              func() Payload { return new(ToolSummary) },
	KindAuthStatus:               func() Payload { return new(AuthStatus) },
	KindAccountUpdated:           func() Payload { return new(AccountUpdated) },
	KindAccountRateLimitsUpdated: func() Payload { return new(AccountRateLimitsUpdated) },
	KindMCPStatusUpdated:         func() Payload { return new(MCPStatusUpdated) },
	KindMCPOAuthCompleted:        func() Payload { return new(MCPOAuthCompleted) },
	KindModelRerouted:            func() Payload { return new(ModelRerouted) },
	KindConfigWarning:            func() Payload { return new(ConfigWarning) },
	KindDeprecationNotice:        func() Payload { return new(DeprecationNotice) },
	KindFilesPersisted:           func() Payload { return new(FilesPersisted) },
	KindRuntimeWarning:           func() Payload { return new(RuntimeWarning) },
	KindRuntimeError:             func() Payload { return new(RuntimeError) },
}

// NewPayload returns a new, zero payload of kind k, or an error wrapping
// ErrUnknownKind.
func NewPayload(k Kind) (Payload, error) {
	f, ok := payloadFactories[k]
	if !ok {
		return nil, &FieldError{Field: "type", Rule: "must be a known event type", Value: string(k), err: ErrUnknownKind}
	}
	return f(), nil
}
