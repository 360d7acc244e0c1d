package canonical

import "encoding/json"

// ThreadStarted is the payload of thread.started.
type ThreadStarted struct {
	// ProviderThreadID is the provider's id of the thread (also in providerRefs).
	ProviderThreadID string `json:"providerThreadId,omitempty"`
}

// ThreadStateChanged is the payload of thread.state.changed.
type ThreadStateChanged struct {
	// State is the new state.
	State ThreadState `json:"state"`
	// Detail is the provider's full status object.
	Detail json.RawMessage `json:"detail,omitempty"`
}

// ThreadMetadataUpdated is the payload of thread.metadata.updated.
type ThreadMetadataUpdated struct {
	// Name is the thread's new name.
	Name string `json:"name,omitempty"`
	// Metadata holds other thread metadata, key by key.
	Metadata map[string]json.RawMessage `json:"metadata,omitempty"`
}

// ThreadTokenUsageUpdated is the payload of thread.token-usage.updated.
type ThreadTokenUsageUpdated struct {
	// Usage is the thread's cumulative usage so far.
	Usage TokenUsage `json:"usage"`
	// Last is the usage of the most recent model call or turn, when the
	// provider reports it separately.
	Last *TokenUsage `json:"last,omitempty"`
	// Turn is the usage of the event's turn (turnId) so far, when the
	// provider reports usage before the turn ends: a log cut off mid-turn
	// has no turn.completed to state it. turn.completed's usage replaces it.
	Turn *TokenUsage `json:"turn,omitempty"`
	// TurnModelUsage breaks Turn down by model name, when known.
	TurnModelUsage map[string]ModelUsage `json:"turnModelUsage,omitempty"`
	// ModelContextWindow is the model's context window in tokens, when known.
	ModelContextWindow *int64 `json:"modelContextWindow,omitempty" canonical:"nonneg"`
}

// ThreadRealtimeStarted is the payload of thread.realtime.started.
type ThreadRealtimeStarted struct {
	// RealtimeSessionID is the provider's realtime session id.
	RealtimeSessionID string `json:"realtimeSessionId,omitempty"`
}

// ThreadRealtimeItemAdded is the payload of thread.realtime.item-added.
type ThreadRealtimeItemAdded struct {
	// Item is the realtime item as the provider sent it.
	Item json.RawMessage `json:"item"`
}

// ThreadRealtimeAudioDelta is the payload of thread.realtime.audio.delta.
type ThreadRealtimeAudioDelta struct {
	// Audio is the audio chunk and its sample metadata as the provider sent them.
	Audio json.RawMessage `json:"audio"`
}

// ThreadRealtimeError is the payload of thread.realtime.error.
type ThreadRealtimeError struct {
	// Message describes the error.
	Message string `json:"message"`
}

// ThreadRealtimeClosed is the payload of thread.realtime.closed.
type ThreadRealtimeClosed struct {
	// Reason says why the realtime session closed.
	Reason string `json:"reason,omitempty"`
}

func (*ThreadStarted) Kind() Kind            { return KindThreadStarted }
func (*ThreadStateChanged) Kind() Kind       { return KindThreadStateChanged }
func (*ThreadMetadataUpdated) Kind() Kind    { return KindThreadMetadataUpdated }
func (*ThreadTokenUsageUpdated) Kind() Kind  { return KindThreadTokenUsageUpdated }
func (*ThreadRealtimeStarted) Kind() Kind    { return KindThreadRealtimeStarted }
func (*ThreadRealtimeItemAdded) Kind() Kind  { return KindThreadRealtimeItemAdded }
func (*ThreadRealtimeAudioDelta) Kind() Kind { return KindThreadRealtimeAudioDelta }
func (*ThreadRealtimeError) Kind() Kind      { return KindThreadRealtimeError }
func (*ThreadRealtimeClosed) Kind() Kind     { return KindThreadRealtimeClosed }

func (*ThreadStarted) isPayload()            {}
func (*ThreadStateChanged) isPayload()       {}
func (*ThreadMetadataUpdated) isPayload()    {}
func (*ThreadTokenUsageUpdated) isPayload()  {}
func (*ThreadRealtimeStarted) isPayload()    {}
func (*ThreadRealtimeItemAdded) isPayload()  {}
func (*ThreadRealtimeAudioDelta) isPayload() {}
func (*ThreadRealtimeError) isPayload()      {}
func (*ThreadRealtimeClosed) isPayload()     {}
