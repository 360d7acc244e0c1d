package codexrollout

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/agentwire/agentwire/pkg/adapters/codexcommon"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// sighting is one line's report of an item.
type sighting struct {
	fam  Family
	pid  string
	key  string // tool calls: "call:<id>"
	tool bool
	lc   canonical.ItemLifecycle
	// final marks a sighting that ends the item (a tool call's output, an
	// end event with nothing after it).
	final bool
}

func (mp *mapper) itemEnv(it OpenItem) canonical.Event {
	env := mp.env
	env.ItemID = it.ID
	env.ProviderRefs.ProviderItemID = it.PID
	if it.PID == "" && strings.HasPrefix(it.Key, "call:") {
		env.ProviderRefs.ProviderItemID = strings.TrimPrefix(it.Key, "call:")
	}
	return env
}

// newID gives an item its canonical id: native from the provider id
// (scoped by thread and turn, as the app-server adapter does) unless that
// id was used already, derived from the line otherwise.
func (mp *mapper) newID(pid string) string {
	if pid != "" && !slices.Contains(mp.st.Done, "pid:"+pid) && !slices.ContainsFunc(mp.st.Open, func(o OpenItem) bool { return o.PID == pid }) {
		return mp.em.IDs().Native(canonical.EntityItem, mp.st.Thread, mp.st.Turn, pid)
	}
	n := mp.em.Len()
	return mp.em.IDs().Derived(canonical.EntityItem, mp.f.Ordinal, n)
}

func merge(dst map[canonical.StreamKind]string, src map[canonical.StreamKind]string) map[canonical.StreamKind]string {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = map[canonical.StreamKind]string{}
	}
	maps.Copy(dst, src)
	return dst
}

// userMessageID is a user message's canonical id: keyed by its turn and
// text as the app-server adapter keys it (codexcommon.UserMessageKey), so
// a tap and this log of one run describe one item. "" when the turn is
// unknown, or the id is taken already in this session (a copy that did
// not pair), for newID to derive one.
func (mp *mapper) userMessageID(s sighting) string {
	if s.lc.ItemType != canonical.ItemTypeUserMessage || s.tool || mp.st.Thread == "" || mp.st.Turn == "" {
		return ""
	}
	id := mp.em.IDs().Native(canonical.EntityItem, mp.st.Thread, mp.st.Turn, codexcommon.UserMessageKey(s.lc.Content[canonical.StreamUnknown]))
	if slices.Contains(mp.st.Done, "id:"+id) || slices.ContainsFunc(mp.st.Open, func(o OpenItem) bool { return o.ID == id }) {
		return ""
	}
	return id
}

func (mp *mapper) open(s sighting) OpenItem {
	id := mp.userMessageID(s)
	if id == "" {
		id = mp.newID(s.pid)
	}
	it := OpenItem{
		Key: s.key, PID: s.pid, ID: id, Type: s.lc.ItemType, Family: s.fam, Tool: s.tool,
		Content: merge(nil, s.lc.Content), Title: s.lc.Title, Command: s.lc.Command, ToolName: s.lc.ToolName,
		ExitCode: s.lc.ExitCode, DurationMs: s.lc.DurationMs, ByUser: s.lc.ByUser,
	}
	p := s.lc
	p.Status = canonical.ItemStatusInProgress
	p.ExitCode, p.DurationMs = nil, nil
	st := canonical.ItemStarted(p)
	mp.em.Emit(mp.itemEnv(it), &st)
	return it
}

func (mp *mapper) complete(it OpenItem, p canonical.ItemLifecycle) {
	mp.st.Open = slices.DeleteFunc(mp.st.Open, func(o OpenItem) bool { return o.ID == it.ID })
	mp.st.Done = append(mp.st.Done, "id:"+it.ID)
	if it.Key != "" {
		mp.st.Done = append(mp.st.Done, it.Key)
	}
	if it.PID != "" {
		mp.st.Done = append(mp.st.Done, "pid:"+it.PID)
	}
	if p.ItemType == "" || p.ItemType == canonical.ItemTypeUnknown {
		p.ItemType = it.Type
	}
	p.Content = merge(merge(nil, it.Content), p.Content)
	if p.Title == "" {
		p.Title = it.Title
	}
	if p.Command == "" {
		p.Command = it.Command
	}
	if p.ToolName == "" {
		p.ToolName = it.ToolName
	}
	if p.ExitCode == nil {
		p.ExitCode = it.ExitCode
	}
	if p.DurationMs == nil {
		p.DurationMs = it.DurationMs
	}
	p.ByUser = p.ByUser || it.ByUser
	if p.Status == "" || p.Status == canonical.ItemStatusInProgress {
		p.Status = canonical.ItemStatusCompleted
	}
	c := canonical.ItemCompleted(p)
	mp.em.Emit(mp.itemEnv(it), &c)
}

func (mp *mapper) update(i int, p canonical.ItemLifecycle) {
	it := &mp.st.Open[i]
	it.Content = merge(it.Content, p.Content)
	it.Streaming = false
	if p.ItemType == "" || p.ItemType == canonical.ItemTypeUnknown {
		p.ItemType = it.Type
	}
	if p.ExitCode != nil {
		it.ExitCode = p.ExitCode
	}
	if p.DurationMs != nil {
		it.DurationMs = p.DurationMs
	}
	it.ByUser = it.ByUser || p.ByUser
	p.ByUser = it.ByUser
	p.Status, p.ExitCode, p.DurationMs = canonical.ItemStatusInProgress, nil, nil
	u := canonical.ItemUpdated(p)
	mp.em.Emit(mp.itemEnv(*it), &u)
}

// toolSighting maps a line about a tool call, keyed by its call id: the
// first line opens the item, later ones update it, its output (or an end
// event that nothing follows) completes it. A line about a call already
// completed is reported as tool.progress, so nothing is counted twice.
func (mp *mapper) toolSighting(s sighting) {
	s.tool = true
	if s.key == "call:" {
		s.key = ""
	}
	if s.key != "" && slices.Contains(mp.st.Done, s.key) {
		mp.em.Emit(mp.env, &canonical.ToolProgress{ToolUseID: strings.TrimPrefix(s.key, "call:"), ToolName: s.lc.ToolName, Summary: mp.kind + " after the call completed"})
		return
	}
	i := -1
	if s.key != "" {
		i = slices.IndexFunc(mp.st.Open, func(o OpenItem) bool { return o.Key == s.key })
	}
	if i < 0 {
		it := mp.open(s)
		if s.final {
			mp.complete(it, s.lc)
			return
		}
		mp.st.Open = append(mp.st.Open, it)
		return
	}
	if s.final {
		mp.complete(mp.st.Open[i], s.lc)
		return
	}
	mp.update(i, s.lc)
}

// messageSighting maps a line about a message or reasoning. The rollout
// records each twice, once as EventMsg and once as a response item, in
// either order: the first copy opens the item, the copy from the other
// record completes it. A copy that never gets a partner is completed by the
// next copy of the same record or by the end of the turn.
func (mp *mapper) messageSighting(s sighting) {
	t := s.lc.ItemType
	compatible := func(o OpenItem) bool {
		return o.Type == t && !o.Tool && (o.PID == "" || s.pid == "" || o.PID == s.pid || t == canonical.ItemTypeUserMessage)
	}
	if s.pid != "" {
		if i := slices.IndexFunc(mp.st.Open, func(o OpenItem) bool { return o.PID == s.pid && !o.Tool }); i >= 0 {
			if mp.st.Open[i].Family != s.fam {
				mp.complete(mp.st.Open[i], s.lc)
			} else {
				mp.update(i, s.lc)
			}
			return
		}
	}
	if i := slices.IndexFunc(mp.st.Open, func(o OpenItem) bool { return o.Family != s.fam && compatible(o) }); i >= 0 {
		mp.complete(mp.st.Open[i], s.lc)
		return
	}
	if i := slices.IndexFunc(mp.st.Open, func(o OpenItem) bool { return o.Family == s.fam && o.Streaming && compatible(o) }); i >= 0 {
		mp.update(i, s.lc)
		return
	}
	for _, o := range slices.Clone(mp.st.Open) {
		if o.Family == s.fam && o.Type == t && !o.Tool {
			mp.complete(o, canonical.ItemLifecycle{})
		}
	}
	mp.st.Open = append(mp.st.Open, mp.open(s))
}

// delta appends streamed text to the open item of the type (legacy
// deltas name no item) or of the id, opening it when needed.
func (mp *mapper) delta(t canonical.ItemType, k canonical.StreamKind, pid, text string, contentIndex, summaryIndex *int) {
	var i int
	if pid != "" {
		i = slices.IndexFunc(mp.st.Open, func(o OpenItem) bool { return o.PID == pid })
	} else {
		i = slices.IndexFunc(mp.st.Open, func(o OpenItem) bool { return o.Type == t && o.Family == FamilyEvent && !o.Tool })
	}
	if i < 0 {
		it := mp.open(sighting{fam: FamilyEvent, pid: pid, lc: canonical.ItemLifecycle{ItemType: t}})
		it.Streaming = true
		mp.st.Open = append(mp.st.Open, it)
		i = len(mp.st.Open) - 1
	}
	it := mp.st.Open[i]
	mp.em.Emit(mp.itemEnv(it), &canonical.ContentDelta{StreamKind: k, Delta: text, ContentIndex: contentIndex, SummaryIndex: summaryIndex})
}

// closeAll completes every open item and resolves every open request: the
// turn they belong to is over.
func (mp *mapper) closeAll(status canonical.ItemStatus) {
	for _, r := range mp.st.Requests {
		env := mp.env
		env.RequestID, env.ItemID = r.ID, r.Item
		env.ProviderRefs.ProviderRequestID = r.Call
		mp.em.Emit(env, &canonical.RequestResolved{RequestType: r.Type, Resolution: json.RawMessage(`{"resolvedBy":"end of turn"}`)})
	}
	mp.st.Requests = nil
	for _, o := range slices.Clone(mp.st.Open) {
		mp.complete(o, canonical.ItemLifecycle{Status: status})
	}
	mp.st.Done = nil
}
