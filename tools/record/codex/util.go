package codex

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// prefixWriter prefixes each line written to w, so CLI stderr in the run
// log says which process wrote it.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	var out bytes.Buffer
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		out.WriteString(p.prefix)
		out.Write(l)
	}
	if _, err := p.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}

// joinNotes joins a scenario note and observations into one manifest note.
func joinNotes(first string, rest ...[]string) string {
	var all []string
	if first != "" {
		all = append(all, first)
	}
	for _, r := range rest {
		for _, n := range r {
			if n != "" {
				all = append(all, n)
			}
		}
	}
	return strings.Join(all, "; ")
}

// logf writes a progress line; the log is best effort.
func logf(w io.Writer, format string, a ...any) { _, _ = fmt.Fprintf(w, format, a...) }
