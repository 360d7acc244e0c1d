package adapter

import "time"

// Clock puts a session's events on one time line when only some of its
// frames carry the provider's time. Mixing the two clocks (the provider's
// for the frames that say, the arrival's for the rest) made durations of
// their difference: skew between two machines, or days for a log ingested
// after the fact. A frame without a time is placed at its arrival shifted
// by the provider's lead over arrival at the last frame that had one;
// before any has, at its arrival.
//
// It reads no wall clock, only the frames' times: it is part of a
// session's state and round-trips through encoding/json.
type Clock struct {
	// Lead is the provider's time minus the arrival time of the last
	// frame that carried one.
	Lead time.Duration `json:"leadNs,omitzero"`
	// Known says whether a frame has carried the provider's time yet.
	Known bool `json:"known,omitzero"`
}

// At is the time of a frame that arrived at received and carries the
// provider's time provider (zero when it carries none; one an event cannot
// carry, see Writable, counts as none).
func (c *Clock) At(received, provider time.Time) time.Time {
	if c.Stated(provider) {
		c.Lead, c.Known = provider.Sub(received), true
		return provider
	}
	if c.Known && !received.IsZero() {
		return received.Add(c.Lead)
	}
	return received
}

// Stated says whether At takes provider as the frame's time.
func (*Clock) Stated(provider time.Time) bool {
	return !provider.IsZero() && Writable(provider)
}
