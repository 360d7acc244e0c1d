package adapter

import "time"

// The times an event can carry: the wire format writes times in RFC 3339,
// whose years have four digits. A frame's time outside them (a corrupt
// line, a unit mistaken, an offset that carries 9999-12-31 into the next
// year) made an event that could not be encoded, and the normalizer
// dead-lettered it: such a time is treated as absent.
var (
	earliest = time.Date(0, time.January, 1, 0, 0, 0, 0, time.UTC)
	latest   = time.Date(9999, time.December, 31, 23, 59, 59, 999_999_999, time.UTC)
)

// Writable reports whether an event can carry t.
func Writable(t time.Time) bool { return !t.Before(earliest) && !t.After(latest) }

// Unix is the time sec seconds after the Unix epoch, in UTC, and whether
// an event can carry it. Adapters read times the providers give as
// numbers with it; bounds checked first, sec cannot overflow.
func Unix(sec int64) (time.Time, bool) {
	if sec < earliest.Unix() || sec > latest.Unix() {
		return time.Time{}, false
	}
	return time.Unix(sec, 0).UTC(), true
}

// UnixMilli is Unix for a time in milliseconds.
func UnixMilli(ms int64) (time.Time, bool) {
	if ms < earliest.UnixMilli() || ms > latest.UnixMilli() {
		return time.Time{}, false
	}
	return time.UnixMilli(ms).UTC(), true
}

// Measured is a duration a provider measured, nil when it states none or
// a negative one, which measures nothing.
func Measured[T int64 | float64](d *T) *T {
	if d == nil || *d < 0 {
		return nil
	}
	return d
}
