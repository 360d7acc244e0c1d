package canonical

import (
	"encoding/json"
	"time"
)

// AuthStatus is the payload of auth.status.
type AuthStatus struct {
	// IsAuthenticating reports whether a login is in progress.
	IsAuthenticating *bool `json:"isAuthenticating,omitempty"`
	// Output holds the login flow's output lines.
	Output []string `json:"output,omitempty"`
	// Error says why authentication failed.
	Error string `json:"error,omitempty"`
}

// AccountUpdated is the payload of account.updated.
type AccountUpdated struct {
	// Account is the provider's account object as it sent it.
	Account json.RawMessage `json:"account"`
}

// AccountRateLimitsUpdated is the payload of account.rate-limits.updated:
// one rate-limit observation, with the provider's snapshot in RateLimits and
// one entry per limit window in Windows.
type AccountRateLimitsUpdated struct {
	// RateLimits is the provider's rate-limit snapshot as it sent it.
	RateLimits json.RawMessage `json:"rateLimits"`
	// Windows lists the observed limit windows, when the snapshot names them.
	Windows []RateLimitWindow `json:"windows,omitempty"`
}

// RateLimitWindow is one rate-limit window of an observation.
type RateLimitWindow struct {
	// Name names the window (primary, secondary, five_hour, seven_day, ...).
	Name string `json:"name"`
	// UsedPercent is how much of the window is used, 0 to 100, when the provider says.
	UsedPercent *float64 `json:"usedPercent,omitempty" canonical:"nonneg"`
	// WindowMinutes is the window's length in minutes, when known.
	WindowMinutes *int64 `json:"windowMinutes,omitempty" canonical:"nonneg"`
	// ResetsAt is when the window resets, when known.
	ResetsAt *time.Time `json:"resetsAt,omitempty"`
	// Status is the provider's status word for the window (allowed, rejected, ...).
	Status string `json:"status,omitempty"`
}

// MCPStatusUpdated is the payload of mcp.status.updated.
type MCPStatusUpdated struct {
	// Status is the MCP servers' status as the provider sent it.
	Status json.RawMessage `json:"status"`
}

// MCPOAuthCompleted is the payload of mcp.oauth.completed.
type MCPOAuthCompleted struct {
	// Success reports whether the login succeeded.
	Success bool `json:"success"`
	// Name is the MCP server's name.
	Name string `json:"name,omitempty"`
	// Error says why the login failed.
	Error string `json:"error,omitempty"`
}

// ModelRerouted is the payload of model.rerouted.
type ModelRerouted struct {
	// FromModel is the model that was asked for.
	FromModel string `json:"fromModel"`
	// ToModel is the model that answers instead.
	ToModel string `json:"toModel"`
	// Reason says why.
	Reason string `json:"reason"`
}

func (*AuthStatus) Kind() Kind               { return KindAuthStatus }
func (*AccountUpdated) Kind() Kind           { return KindAccountUpdated }
func (*AccountRateLimitsUpdated) Kind() Kind { return KindAccountRateLimitsUpdated }
func (*MCPStatusUpdated) Kind() Kind         { return KindMCPStatusUpdated }
func (*MCPOAuthCompleted) Kind() Kind        { return KindMCPOAuthCompleted }
func (*ModelRerouted) Kind() Kind            { return KindModelRerouted }

func (*AuthStatus) isPayload()               {}
func (*AccountUpdated) isPayload()           {}
func (*AccountRateLimitsUpdated) isPayload() {}
func (*MCPStatusUpdated) isPayload()         {}
func (*MCPOAuthCompleted) isPayload()        {}
func (*ModelRerouted) isPayload()            {}
