package canonical

import "encoding/json"

// SessionStarted is the payload of session.started.
type SessionStarted struct {
	// Message is a human-readable note about the start, if the provider gave one.
	Message string `json:"message,omitempty"`
	// Resume describes the session this one resumes or forks, as the provider said it.
	Resume json.RawMessage `json:"resume,omitempty"`
}

// SessionConfigured is the payload of session.configured.
type SessionConfigured struct {
	// Config is the session configuration the provider announced (model,
	// tools, permission mode, capabilities, ...), key by key.
	Config map[string]json.RawMessage `json:"config"`
}

// SessionStateChanged is the payload of session.state.changed.
type SessionStateChanged struct {
	// State is the new state.
	State SessionState `json:"state"`
	// Reason says why, in the provider's words.
	Reason string `json:"reason,omitempty"`
	// Detail adds human-readable detail.
	Detail string `json:"detail,omitempty"`
}

// SessionExited is the payload of session.exited.
type SessionExited struct {
	// Reason says why the session ended.
	Reason string `json:"reason,omitempty"`
	// Recoverable reports whether the session can be resumed.
	Recoverable *bool `json:"recoverable,omitempty"`
	// ExitKind says whether it ended normally.
	ExitKind ExitKind `json:"exitKind,omitempty"`
	// ExitCode is the agent process's exit status, when a process ended.
	ExitCode *int `json:"exitCode,omitempty"`
}

func (*SessionStarted) Kind() Kind      { return KindSessionStarted }
func (*SessionConfigured) Kind() Kind   { return KindSessionConfigured }
func (*SessionStateChanged) Kind() Kind { return KindSessionStateChanged }
func (*SessionExited) Kind() Kind       { return KindSessionExited }

func (*SessionStarted) isPayload()      {}
func (*SessionConfigured) isPayload()   {}
func (*SessionStateChanged) isPayload() {}
func (*SessionExited) isPayload()       {}
