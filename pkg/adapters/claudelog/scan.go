package claudelog

import (
	"bytes"

	"github.com/agentwire/agentwire/internal/jsonscan"
)

// lineFields are the members of line, in its order.
var lineFields = []string{
	"type", "subtype", "sessionId", "uuid", "timestamp", "isSidechain", "isMeta", "isCompactSummary",
	"isApiErrorMessage", "error", "message", "toolUseResult", "data", "toolUseID", "parentToolUseID",
	"summary", "customTitle", "content", "durationMs", "compactMetadata", "level", "hookErrors",
	"preventedContinuation", "retryAttempt", "maxRetries", "snapshot", "isSnapshotUpdate",
	"version", "cwd", "gitBranch", "hookInfos", "attachment", "leafUuid", "agentId",
}

// scanLine decodes a session-log line as json.Unmarshal into line does, by
// one validation and a scan (jsonscan.Fields) rather than a decode
// that validates every raw member again; ok is false for a line it cannot
// read exactly so (invalid JSON, members of other types), which Map then
// decodes with encoding/json. The raw members are slices of a copy of the
// line, as decoded ones are copies. info is the validation's finding, for
// the event's raw frame (canonical.NewRawChecked).
func scanLine(b []byte) (line, jsonscan.Info, bool) {
	info := jsonscan.Check(b)
	if !info.Valid {
		return line{}, info, false
	}
	c := bytes.Clone(b)
	var v [34][]byte
	if !jsonscan.Fields(c, lineFields, v[:]) {
		return line{}, info, false
	}
	var l line
	strs := []*string{0: &l.Type, 1: &l.Subtype, 2: &l.SessionID, 3: &l.UUID, 4: &l.Timestamp, 13: &l.ToolUseID, 14: &l.ParentToolUseID, 15: &l.Summary, 16: &l.CustomTitle, 20: &l.Level,
		27: &l.Version, 28: &l.Cwd, 29: &l.GitBranch, 32: &l.LeafUUID, 33: &l.AgentID}
	for i, p := range strs {
		if p == nil {
			continue
		}
		s, ok := jsonscan.String(v[i])
		if !ok {
			return line{}, info, false
		}
		*p = s
	}
	bools := []*bool{5: &l.IsSidechain, 6: &l.IsMeta, 7: &l.IsCompactSummary, 8: &l.IsAPIErrorMessage, 22: &l.Prevented, 26: &l.IsSnapshotUpdate}
	for i, p := range bools {
		if p == nil {
			continue
		}
		x, ok := jsonscan.Bool(v[i])
		if !ok {
			return line{}, info, false
		}
		*p = x
	}
	l.Error, l.Message, l.ToolUseResult, l.Data, l.Content, l.CompactMetadata, l.Snapshot, l.HookInfos, l.Attachment = v[9], v[10], v[11], v[12], v[17], v[19], v[25], v[30], v[31]
	// The few members of other types are small: decoded as they are.
	for _, m := range [...]struct {
		i int
		p any
	}{{18, &l.DurationMs}, {21, &l.HookErrors}, {23, &l.RetryAttempt}, {24, &l.MaxRetries}} {
		if v[m.i] != nil && jsonscan.Unmarshal(v[m.i], m.p) != nil {
			return line{}, info, false
		}
	}
	return l, info, true
}
