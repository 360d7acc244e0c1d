// Package script describes what a scripted model answers, independent of
// any provider's wire format. Each provider's fake model server (OpenAI
// Responses, Anthropic Messages, Gemini) turns a Reply into its own
// streaming format, so one scenario reads the same for every CLI.
package script

// Reply is the model's answer to one main conversation request. Providers'
// side requests (title generation, routing, next-speaker checks, quota
// probes) are answered by the server itself and do not consume replies.
type Reply struct {
	// Thinking is reasoning text streamed before the answer ("" for none).
	Thinking string
	// Text is the assistant text streamed as the answer ("" for none).
	Text string
	// ToolCalls are tool calls the model makes after the text.
	ToolCalls []ToolCall
	// Error, when set, makes the server fail the request with this HTTP
	// status instead of answering (500, 429, ...); the rest is ignored.
	Error *HTTPError
	// InputTokens, CachedTokens and OutputTokens are the usage reported.
	InputTokens, CachedTokens, OutputTokens int
	// Model, when set, keeps the reply for a request whose model name
	// contains it: a background sub-agent (its own model) asks while the
	// main conversation does, in an order no script can fix.
	Model string
}

// ToolCall is one tool call in a Reply.
type ToolCall struct {
	// ID is the provider tool-call id; the server invents one when empty.
	ID string
	// Name is the tool name as the CLI offers it (shell, Bash, run_shell_command, ...).
	Name string
	// Args is the JSON object of arguments.
	Args string
}

// HTTPError is a failed model request.
type HTTPError struct {
	// Status is the HTTP status code.
	Status int
	// Message goes into the provider's error body.
	Message string
	// RetryAfterSeconds sets Retry-After when positive (rate limits).
	RetryAfterSeconds int
}

// Script is the ordered replies of one scenario. A server answers each
// main request with the first reply not yet given that is for its model
// (so, without Model, the n-th request with the n-th reply) and with a
// plain "done" text reply once none is left, so a CLI that asks once more
// than expected still ends its turn instead of hanging.
type Script []Reply
