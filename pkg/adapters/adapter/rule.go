package adapter

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agentwire/agentwire/pkg/canonical"
)

// Rule documents how an adapter maps one frame kind. Each adapter lists a
// Rule for every kind its provider can emit (every INVENTORY row), and its
// mapping code looks kinds up in the same table, so the published mapping
// document cannot drift from the code.
type Rule struct {
	// Kind is the frame kind as INVENTORY.tsv spells it (a method, a type,
	// or type:subtype).
	Kind string
	// Emits lists the canonical types the kind maps to, in order; empty
	// means the frame is consumed without events (keep-alives), which Note
	// must justify.
	Emits []canonical.Kind
	// Note explains the mapping: ids, states, derived events.
	Note string
}

// Rules is an adapter's mapping table.
type Rules []Rule

// WithDiagnostics is the table with the rules of the frames ingest adds to
// a session of any dialect (DiagnosticRules).
func (rs Rules) WithDiagnostics() Rules { return slices.Concat(rs, DiagnosticRules) }

// Lookup returns the rule for kind.
func (rs Rules) Lookup(kind string) (Rule, bool) {
	for _, r := range rs {
		if r.Kind == kind {
			return r, true
		}
	}
	return Rule{}, false
}

// Markdown renders the table as a Markdown document for docs/mapping/.
func (rs Rules) Markdown(dialect, intro string) string {
	sorted := append(Rules(nil), rs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Kind < sorted[j].Kind })
	var b strings.Builder
	fmt.Fprintf(&b, "# Mapping: %s\n\n<!-- Generated from the adapter's rule table; do not edit. -->\n\n%s\n\n", dialect, intro)
	b.WriteString("| frame kind | canonical events | notes |\n|---|---|---|\n")
	for _, r := range sorted {
		emits := make([]string, len(r.Emits))
		for i, k := range r.Emits {
			emits[i] = "`" + string(k) + "`"
		}
		e := strings.Join(emits, ", ")
		if e == "" {
			e = "(none)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.Kind, e, strings.ReplaceAll(r.Note, "|", "\\|"))
	}
	return b.String()
}
