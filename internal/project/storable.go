package project

import (
	"bytes"
	"strings"
)

// Postgres refuses two things valid JSON and Go strings may hold: the
// character U+0000 in text and jsonb (a command printing a NUL byte, a
// binary file read as text), and in jsonb an escaped UTF-16 surrogate
// without its pair (a JavaScript agent cutting a string inside an emoji).
// Refused, the event was dead-lettered: the command's output and status
// never reached its item. Both are stored as U+FFFD, the replacement
// character, instead; RAW and RUNTIME keep the bytes as they came.

// replacement is U+FFFD as a JSON escape, as long as the escapes it
// replaces.
const replacement = `\ufffd`

// storableJSON returns the JSON document doc as Postgres stores it as
// jsonb: doc itself, without a copy, unless it escapes U+0000 or a lone
// surrogate, which become U+FFFD. Backslashes appear only in strings, each
// starting an escape, so one pass from backslash to backslash reads every
// escape and nothing else. What is not valid JSON is left for Postgres to
// refuse.
func storableJSON(doc []byte) []byte {
	var out []byte // nil until an escape is replaced
	copied := 0    // doc[:copied] is in out
	for i := 0; i < len(doc); {
		j := bytes.IndexByte(doc[i:], '\\')
		if j < 0 {
			break
		}
		i += j
		r, ok := escapedUnit(doc, i)
		if !ok {
			i += 2 // another escape, or broken JSON
			continue
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if lo, ok := escapedUnit(doc, i+6); ok && lo >= 0xDC00 && lo <= 0xDFFF {
				i += 12 // a pair: one character
				continue
			}
		case r != 0 && (r < 0xDC00 || r > 0xDFFF):
			i += 6
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(doc))
		}
		out = append(append(out, doc[copied:i]...), replacement...)
		i += 6
		copied = i
	}
	if out == nil {
		return doc
	}
	return append(out, doc[copied:]...)
}

// escapedUnit reads the escape \uXXXX at doc[i:], if that is one.
func escapedUnit(doc []byte, i int) (rune, bool) {
	if i+6 > len(doc) || doc[i] != '\\' || doc[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range doc[i+2 : i+6] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// storableText returns s as Postgres stores it as text: s itself unless it
// holds U+0000, which becomes U+FFFD.
func storableText(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}
