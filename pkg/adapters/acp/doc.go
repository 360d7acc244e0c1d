// Package acp maps Agent Client Protocol traffic (dialect "acp": JSON-RPC
// 2.0 frames, bare or as tap lines {"dir":"agent"|"client","msg":…}) to
// canonical events, for every ACP agent: Cursor (`agent acp`), Gemini CLI
// (`--experimental-acp`), Claude Code through claude-code-acp, and others.
//
// Provider: the one given to NewSession (`--provider`) when there is one;
// else the agent the initialize response names in agentInfo — the agents
// agentwire has adapters for keep their own provider (Gemini CLI → gemini,
// claude-code-acp → claude, codex → codex), so a session has one provider
// however it was captured; any other agent gets canonical.ProviderFromName
// of its name; without agentInfo, cursor. The provider is part of every id,
// so it is settled before any id is made: the client's initialize request,
// the one frame that precedes the answer, maps to no events (its
// clientInfo and capabilities are reported in the answer's
// session.configured). Frames of an excerpt that has no initialize are
// cursor's.
//
// Ids: the canonical session is the ingest session (one agent process, one
// connection). Each ACP session is a thread: threadId is native from the
// sessionId, which is also providerRefs.providerSessionId and
// providerThreadId. Tool calls are items native by (sessionId,
// toolCallId); compactions by compactionId. Turns, text items and requests
// have no usable id on the wire — JSON-RPC ids are per connection and per
// side — so they are derived from the frame that opens them; the JSON-RPC
// id goes to providerRefs.providerRequestId.
//
// Directions: both sides number their requests independently, so pending
// requests are kept per side ("c:1" is the client's request 1, "a:1" the
// agent's). Tap lines say who wrote them; for bare frames, requests and
// notifications are told by method and a response by which side has a
// request of its id pending (agent when nothing tells).
//
// Turns: a turn is a session/prompt request and its response. The request
// opens it (turn.started and the prompt as a user_message item); every
// session/update of that ACP session until the response belongs to it; the
// response ends it with its stopReason (end_turn, max_tokens,
// max_turn_requests and refusal are completed turns whose stopReason says
// why; cancelled is cancelled). A second prompt while one is in flight
// opens a new turn that takes the updates; the superseded turn ends with
// its own response (cancelled). A JSON-RPC error answering a prompt is a
// runtime.error and turn.completed{failed} (-32800: cancelled). Tool calls
// the agent never finished are completed with the turn: declined when
// their permission was rejected, failed when the turn did not complete.
//
// Items: agent_message_chunk, agent_thought_chunk and user_message_chunk
// stream into one text item per run of chunks of a kind (and messageId);
// the next item, a permission request or the turn's end completes it with
// its whole text. tool_call may come several times for one toolCallId:
// one item, started once, updated after. session/request_permission opens
// a request typed by the tool call's kind (execute →
// command_execution_approval, edit/delete/move → file_change_approval,
// else unknown), starting the tool call item when the agent had not
// announced it (Gemini CLI); the client's answer resolves it with the
// chosen option's kind. fs/* and terminal/* requests are tool-protocol
// requests (dynamic_tool_call).
//
// Usage: PromptResponse.usage (unstable) counts the whole session, so the
// turn gets the difference from the last one and the thread the total;
// Gemini CLI's per-prompt _meta.quota.token_count is read (Gemini
// convention) when usage is absent.
//
// Errors: JSON-RPC error codes map to runtime.error classes: parse,
// invalid request, method not found, invalid params → validation_error;
// internal error (-32603) and resource not found (-32002) → provider_error;
// authentication required (-32000) → permission_error; request cancelled
// (-32800) → unknown; codes ACP does not name (Gemini CLI's 429, 500) →
// provider_error. Invalid JSON or a non-JSON-RPC value is runtime.error
// (validation_error) with raw; an unknown method or sessionUpdate is
// runtime.warning.
//
// Frame kinds: a response is of the kind of the request it answers, which
// only the session knows; sessions implement adapter.ContextKinds.
//
// Speed: a frame is validated once and read by a scan (scan.go): the tap
// line's dir and msg, the JSON-RPC members, params.sessionId, update's
// sessionUpdate, stopReason and the members copied into session.configured
// are found without decoding (and validating) each nested layer again;
// what the scan cannot read exactly as encoding/json would goes the
// encoding/json way. Map updates the state's maps in place.
//
// Benchmark: about 148,000 frames/s per core on the recordings (go test
// -bench, this machine: 84 MB/s over the 239 frames of acp-gemini and
// acp-claude-code, 0.9 MB and 7k allocations a pass; best of 4 on a shared
// 2-vCPU machine, so a lower bound). Frames are validated once by
// jsonscan and again in canonical.NewRaw, and decoded on the encoding/json
// v2 engine (jsonscan.Unmarshal); the multi-kilobyte
// available_commands_update frames weigh most.
package acp
