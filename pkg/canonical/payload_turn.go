package canonical

// TurnStarted is the payload of turn.started.
type TurnStarted struct {
	// Model is the model the turn runs on, when known.
	Model string `json:"model,omitempty"`
	// Effort is the reasoning effort, when the provider has one.
	Effort string `json:"effort,omitempty"`
	// AgentID is the provider's id of the sub-agent run the turn belongs
	// to, when a transcript of that run states it (Claude Code's agentId):
	// the session that launched the run names it too (its task's id),
	// and its usage may include the run's.
	AgentID string `json:"agentId,omitempty"`
}

// TurnCompleted is the payload of turn.completed.
type TurnCompleted struct {
	// State is how the turn ended.
	State TurnState `json:"state"`
	// StopReason is the provider's stop reason (end_turn, max_tokens, ...).
	StopReason string `json:"stopReason,omitempty"`
	// Usage is the tokens this turn used (a delta, never a running total).
	Usage *TokenUsage `json:"usage,omitempty"`
	// ModelUsage breaks Usage down by model name.
	ModelUsage map[string]ModelUsage `json:"modelUsage,omitempty"`
	// TotalCostUSD is what the provider says the turn cost, in US dollars.
	TotalCostUSD *float64 `json:"totalCostUsd,omitempty" canonical:"nonneg"`
	// ErrorMessage says why a failed turn failed.
	ErrorMessage string `json:"errorMessage,omitempty"`
	// DurationMs is the turn's wall-clock duration in milliseconds, as the provider measured it.
	DurationMs *int64 `json:"durationMs,omitempty" canonical:"nonneg"`
}

// ModelUsage is one model's share of a turn's usage.
type ModelUsage struct {
	TokenUsage
	// CostUSD is the cost of this model's tokens in US dollars, when known.
	CostUSD *float64 `json:"costUsd,omitempty" canonical:"nonneg"`
	// ContextWindow is the model's context window in tokens, when known.
	ContextWindow *int64 `json:"contextWindow,omitempty" canonical:"nonneg"`
	// WebSearchRequests counts server-side web searches, when reported.
	WebSearchRequests *int64 `json:"webSearchRequests,omitempty" canonical:"nonneg"`
}

// TurnAborted is the payload of turn.aborted.
type TurnAborted struct {
	// Reason says why the turn was aborted.
	Reason string `json:"reason"`
}

// TurnPlanUpdated is the payload of turn.plan.updated: the whole current
// plan, not a change to it.
type TurnPlanUpdated struct {
	// Explanation is the agent's note on the plan.
	Explanation string `json:"explanation,omitempty"`
	// Plan lists the steps in order.
	Plan []PlanStep `json:"plan"`
}

// PlanStep is one step of a plan.
type PlanStep struct {
	// Step is the step's text.
	Step string `json:"step" canonical:"allowempty"`
	// Status is the step's status.
	Status PlanStepStatus `json:"status"`
}

// TurnDiffUpdated is the payload of turn.diff.updated.
type TurnDiffUpdated struct {
	// UnifiedDiff is the turn's aggregated diff; empty when every change was undone.
	UnifiedDiff string `json:"unifiedDiff" canonical:"allowempty"`
}

func (*TurnStarted) Kind() Kind     { return KindTurnStarted }
func (*TurnCompleted) Kind() Kind   { return KindTurnCompleted }
func (*TurnAborted) Kind() Kind     { return KindTurnAborted }
func (*TurnPlanUpdated) Kind() Kind { return KindTurnPlanUpdated }
func (*TurnDiffUpdated) Kind() Kind { return KindTurnDiffUpdated }

func (*TurnStarted) isPayload()     {}
func (*TurnCompleted) isPayload()   {}
func (*TurnAborted) isPayload()     {}
func (*TurnPlanUpdated) isPayload() {}
func (*TurnDiffUpdated) isPayload() {}
