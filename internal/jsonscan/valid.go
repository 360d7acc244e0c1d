// Package jsonscan reads JSON without decoding it: one validating pass
// that also tells whether a document is compact and how deep it nests, and
// scans that find members, elements and strings of documents known to be
// valid. The adapters read every frame's routing members this way, and
// canonical.NewRaw decides how to keep a frame; encoding/json's own
// validator is a byte-at-a-time state machine that costs more than the
// mapping it guards.
package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// Info is what Check learns of a document.
type Info struct {
	// Valid is json.Valid's answer.
	Valid bool
	// Compact reports no whitespace outside strings, leading and trailing
	// included: json.Compact would leave the document as it is. Only
	// meaningful when Valid.
	Compact bool
	// Depth is the deepest nesting of arrays and objects (0 for a scalar).
	// Only meaningful when Valid.
	Depth int
}

// Valid reports whether b is one valid JSON value with optional
// surrounding whitespace, exactly as json.Valid does: bytes that are not
// UTF-8 are allowed inside strings, control characters are not.
func Valid(b []byte) bool { return Check(b).Valid }

// class of each byte inside a string: 0 plain, 1 ends or escapes, 2 is a
// control character that JSON forbids there.
var strClass = func() (t [256]byte) {
	for c := range 0x20 {
		t[c] = 2
	}
	t['"'], t['\\'] = 1, 1
	return t
}()

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// ws returns the index of the first non-space byte at or after i, and
// clears *compact when it skipped any.
func ws(b []byte, i int, compact *bool) int {
	j := i
	for j < len(b) && isSpace(b[j]) {
		j++
	}
	if j != i {
		*compact = false
	}
	return j
}

// closer is the byte that closes the container opened by c.
func closer(c byte) byte {
	if c == '{' {
		return '}'
	}
	return ']'
}

// Check validates b in one pass and reports its shape. Nesting is tracked
// on a heap stack, not by recursion, so a frame of a million '[' costs a
// megabyte, not a goroutine stack of gigabytes.
func Check(b []byte) Info {
	info, _ := check(b, false, nil)
	return info
}

// Member is where a member of an object is: its key between b[KeyStart]
// and b[KeyEnd] (inside the quotes, escapes as written) and its value
// between b[Start] and b[End].
type Member struct{ KeyStart, KeyEnd, Start, End int }

// CheckObject is Check that also appends, in order, where each member of
// the top-level object is to members: one pass where Check then
// EachMember would be two. The members are only meaningful when the
// document is valid and an object.
func CheckObject(b []byte, members []Member) (Info, []Member) {
	return check(b, true, members[:0])
}

func check(b []byte, track bool, members []Member) (Info, []Member) {
	var small [32]byte
	stack := small[:0] // the opener of each open container
	compact, depth, ok := true, 0, true
	// open is the member of the top-level object whose value is being read.
	open := false
	var m Member
	i := ws(b, 0, &compact)
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return Info{}, members
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			stack = append(stack, c)
			depth = max(depth, len(stack))
			i = ws(b, i+1, &compact)
			if i < len(b) && b[i] == closer(c) {
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				k := i
				if i, ok = key(b, i, &compact); !ok {
					return Info{}, members
				}
				if track && len(stack) == 1 {
					m, open = member(b, k, i), true
				}
			}
			continue
		case c == '"':
			i, ok = stringEnd(b, i)
		case c == '-' || isDigit(c):
			i, ok = numberEnd(b, i)
		case c == 't':
			i, ok = literal(b, i, "true")
		case c == 'f':
			i, ok = literal(b, i, "false")
		case c == 'n':
			i, ok = literal(b, i, "null")
		default:
			ok = false
		}
		if !ok {
			return Info{}, members
		}
		// A value ended: close containers until the next value starts.
		for {
			if open && len(stack) == 1 {
				m.End, open = i, false
				members = append(members, m)
			}
			i = ws(b, i, &compact)
			if len(stack) == 0 {
				if i != len(b) {
					return Info{}, members
				}
				return Info{Valid: true, Compact: compact, Depth: depth}, members
			}
			if i >= len(b) {
				return Info{}, members
			}
			top := stack[len(stack)-1]
			if b[i] == closer(top) {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return Info{}, members
			}
			i = ws(b, i+1, &compact)
			if top == '{' {
				k := i
				if i, ok = key(b, i, &compact); !ok {
					return Info{}, members
				}
				if track && len(stack) == 1 {
					m, open = member(b, k, i), true
				}
			}
			break
		}
	}
}

// member is the Member whose key's opening quote is at b[k] and whose
// value starts at b[start], a key key() has read already.
func member(b []byte, k, start int) Member {
	end, _ := stringEnd(b, k)
	return Member{KeyStart: k + 1, KeyEnd: end - 1, Start: start}
}

// key reads a member's name, its colon and the whitespace around them,
// returning where the member's value starts.
func key(b []byte, i int, compact *bool) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	i, ok := stringEnd(b, i)
	if !ok {
		return 0, false
	}
	i = ws(b, i, compact)
	if i >= len(b) || b[i] != ':' {
		return 0, false
	}
	return ws(b, i+1, compact), true
}

// stringEnd returns the index just past the valid JSON string that starts
// at b[i] (a quote).
func stringEnd(b []byte, i int) (int, bool) {
	n := len(b)
	for i++; i < n; {
		i = plainRun(b, i)
		if i >= n {
			break
		}
		c := b[i]
		switch strClass[c] {
		case 0:
			i++
			continue
		case 2:
			return 0, false
		}
		if c == '"' {
			return i + 1, true
		}
		// A backslash.
		if i+1 >= n {
			return 0, false
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > n {
				return 0, false
			}
			for _, h := range b[i+2 : i+6] {
				if !isHex(h) {
					return 0, false
				}
			}
			i += 6
		default:
			return 0, false
		}
	}
	return 0, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// numberEnd returns the index just past the JSON number that starts at b[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func numberEnd(b []byte, i int) (int, bool) {
	n := len(b)
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= n:
		return 0, false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i++; i < n && isDigit(b[i]); i++ {
		}
	default:
		return 0, false
	}
	if i < n && b[i] == '.' {
		i++
		if i >= n || !isDigit(b[i]) {
			return 0, false
		}
		for i++; i < n && isDigit(b[i]); i++ {
		}
	}
	if i < n && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < n && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= n || !isDigit(b[i]) {
			return 0, false
		}
		for i++; i < n && isDigit(b[i]); i++ {
		}
	}
	return i, true
}

func literal(b []byte, i int, word string) (int, bool) {
	if len(b)-i >= len(word) && string(b[i:i+len(word)]) == word {
		return i + len(word), true
	}
	return 0, false
}

// Eight bytes at a time: a byte of each lane.
const (
	lanes1  = 0x0101010101010101
	lanes80 = 0x8080808080808080
)

// plainRun returns the index of the first byte at or after i that is not
// plain inside a string (a quote, a backslash or a control character),
// or len(b). It tests eight bytes at a time: texts (messages, tool
// output, file contents) are most of what the scans read, and a byte at a
// time was the largest part of decoding an event.
func plainRun(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (lanes1 * '"')
		s := x ^ (lanes1 * '\\')
		// A lane is flagged when it is zero (q, s: the byte is a quote or
		// a backslash) or below 0x20; a lane at or above 0x80 never is.
		// Borrows can flag a lane above a flagged one, never below, so the
		// lowest flag is exact.
		m := ((q - lanes1) &^ q) | ((s - lanes1) &^ s) | ((x - lanes1*0x20) &^ x)
		if m &= lanes80; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b) && strClass[b[i]] == 0; i++ {
	}
	return i
}
