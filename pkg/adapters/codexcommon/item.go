package codexcommon

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Item is a Codex item in any surface's spelling: the app-server's
// ThreadItem (camelCase), the rollout's TurnItem (snake_case, PascalCase
// tags) and exec's ThreadItem (snake_case). Fields whose shape differs
// between surfaces stay raw and are read by Lifecycle.
type Item struct {
	ID                    string          `json:"id"`
	Type                  string          `json:"type"`
	Text                  string          `json:"text"`
	Content               json.RawMessage `json:"content"`
	Summary               json.RawMessage `json:"summary"`
	Command               json.RawMessage `json:"command"`
	AggregatedOutput      *string         `json:"aggregatedOutput"`
	AggregatedOutputSnake *string         `json:"aggregated_output"`
	ExitCode              *int            `json:"exitCode"`
	ExitCodeSnake         *int            `json:"exit_code"`
	DurationMs            *int64          `json:"durationMs"`
	// Source says who ran a command (app-server: agent, userShell, ...);
	// raw, as other items may spell a source another way.
	Source  json.RawMessage `json:"source"`
	Status  json.RawMessage `json:"status"`
	Changes json.RawMessage `json:"changes"`
	Server  string          `json:"server"`
	Tool    string          `json:"tool"`
	Query   string          `json:"query"`
	Message string          `json:"message"`
	Path    string          `json:"path"`
	Prompt  string          `json:"prompt"`
	Items   []struct {
		Text      string `json:"text"`
		Completed bool   `json:"completed"`
	} `json:"items"`
}

// UserMessageKey is the native key of a user message item within its turn.
// Codex gives one message different ids in the app-server protocol and in
// the rollout (there the response item's id is not the item's, and older
// versions give the message none), so both adapters key it by its text:
// a tap and the rollout log of one run then describe one item, not two.
// Only the first message of a turn with a given text takes this key: a
// second one alike (a turn steered twice the same way) keeps an id of its
// own in each adapter, so it is its own item, though a tap and a rollout
// then tell it as two.
func UserMessageKey(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "user-message:" + hex.EncodeToString(sum[:12])
}

// Lifecycle builds the canonical item payload of a Codex item; final marks
// an item.completed, whose content is authoritative. data is the item as
// it came, kept whole.
func (it Item) Lifecycle(data json.RawMessage, final bool) canonical.ItemLifecycle {
	t, _ := ItemType(it.Type)
	p := canonical.ItemLifecycle{
		ItemType: t,
		Status:   ItemStatus(statusWord(it.Status), final),
		Command:  commandLine(it.Command),
		ExitCode: first(it.ExitCode, it.ExitCodeSnake),
		Data:     data,
	}
	switch t { //nolint:exhaustive // only these item types have a title or tool name
	case canonical.ItemTypeMCPToolCall:
		p.ToolName, p.Title = it.Tool, strings.Trim(it.Server+"/"+it.Tool, "/")
	case canonical.ItemTypeDynamicToolCall, canonical.ItemTypeCollabAgentToolCall:
		p.ToolName, p.Title = it.Tool, it.Tool
		p.Detail = it.Prompt
	case canonical.ItemTypeWebSearch:
		p.Title = it.Query
	case canonical.ItemTypeCommandExecution:
		p.Title = p.Command
		p.ByUser = UserShell(it.Source)
	case canonical.ItemTypeImageView:
		p.Title = it.Path
	case canonical.ItemTypeError:
		p.Detail = it.Message
	}
	p.Files = changedFiles(it.Changes)
	p.DurationMs = adapter.Measured(it.DurationMs)
	if !final {
		p.ExitCode, p.DurationMs = nil, nil
		if p.Status != canonical.ItemStatusInProgress {
			// A start or update is never a terminal status, whatever
			// the item snapshot says.
			p.Status = canonical.ItemStatusInProgress
		}
	}
	if c := it.content(t); len(c) > 0 && (final || t == canonical.ItemTypeUserMessage) {
		p.Content = c
	}
	return p
}

// statusWord reads a status that is a string (completed) or, in the
// rollout, an object or a tagged enum ({"Completed": ...}).
func statusWord(raw json.RawMessage) string {
	var s string
	if jsonscan.Unmarshal(raw, &s) == nil {
		return s
	}
	var m map[string]json.RawMessage
	if jsonscan.Unmarshal(raw, &m) == nil {
		if t, ok := m["type"]; ok {
			_ = jsonscan.Unmarshal(t, &s)
			return s
		}
		for k := range m {
			return k
		}
	}
	return ""
}

// commandLine reads a command as a string (app-server, exec) or an argv
// array (rollout).
func commandLine(raw json.RawMessage) string {
	var s string
	if jsonscan.Unmarshal(raw, &s) == nil {
		return s
	}
	var argv []string
	if jsonscan.Unmarshal(raw, &argv) == nil {
		return strings.Join(argv, " ")
	}
	return ""
}

// changedFiles reads changes as a list of {path} (app-server, exec) or a
// map keyed by path (rollout).
func changedFiles(raw json.RawMessage) []string {
	var list []struct {
		Path string `json:"path"`
	}
	var files []string
	if jsonscan.Unmarshal(raw, &list) == nil {
		for _, c := range list {
			if c.Path != "" {
				files = append(files, c.Path)
			}
		}
		return files
	}
	var byPath map[string]json.RawMessage
	if jsonscan.Unmarshal(raw, &byPath) == nil {
		for p := range byPath {
			files = append(files, p)
		}
		sort.Strings(files)
	}
	return files
}

// content is the item's text per stream kind.
func (it Item) content(t canonical.ItemType) map[canonical.StreamKind]string {
	out := map[canonical.StreamKind]string{}
	put := func(k canonical.StreamKind, s string) {
		if s != "" {
			out[k] = s
		}
	}
	switch t { //nolint:exhaustive // only these item types carry text
	case canonical.ItemTypeAssistantMessage, canonical.ItemTypeUserMessage:
		put(canonical.StreamAssistantText, Text(it.Text, joinText(it.Content)))
		if t == canonical.ItemTypeUserMessage {
			// A user message is not assistant text: keep it as unknown
			// stream content, the only neutral kind.
			if s, ok := out[canonical.StreamAssistantText]; ok {
				delete(out, canonical.StreamAssistantText)
				out[canonical.StreamUnknown] = s
			}
		}
	case canonical.ItemTypeReasoning:
		put(canonical.StreamReasoningSummaryText, joinText(it.Summary))
		put(canonical.StreamReasoningText, Text(it.Text, joinText(it.Content)))
	case canonical.ItemTypePlan:
		put(canonical.StreamPlanText, Text(it.Text, joinText(it.Content)))
	case canonical.ItemTypeCommandExecution:
		if o := first(it.AggregatedOutput, it.AggregatedOutputSnake); o != nil {
			put(canonical.StreamCommandOutput, *o)
		}
	}
	return out
}

// joinText concatenates the text of a list of strings or of content parts
// ({type, text}), separating parts with a blank line as Codex renders them.
func joinText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if jsonscan.Unmarshal(raw, &s) == nil {
		return s
	}
	var strs []string
	if jsonscan.Unmarshal(raw, &strs) == nil {
		return strings.Join(strs, "\n\n")
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if jsonscan.Unmarshal(raw, &parts) != nil {
		return ""
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// JoinText is joinText for the dialects: the text of a string, a list of
// strings or a list of content parts.
func JoinText(raw json.RawMessage) string { return joinText(raw) }

// UserShell says whether a command's source (the app-server's
// CommandExecutionSource, the rollout's ExecCommandSource) is the user's
// shell: a command the user typed into the CLI, not one the agent ran.
func UserShell(source json.RawMessage) bool {
	var s string
	return jsonscan.Unmarshal(source, &s) == nil && (s == "userShell" || s == "user_shell")
}
