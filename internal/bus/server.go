package bus

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// A Feature is something agentwire uses that a NATS server has only from
// a release on. An older server does not refuse what it does not know: it
// ignores a consumer's priority policy (two normalizer workers would then
// share a partition and map a session's frames out of order), drops a
// stream's metadata (RAW's partition count), or never answers an API
// request it lacks (a consumer reset timed out, and the projector started
// over forever). So the services ask the server's version before they use
// a feature, and refuse saying what to do, or do without it.
type Feature struct {
	// Since is the first server release with the feature.
	Since string
	// Use says who needs it, and what for, after "which".
	Use string
}

var (
	// StreamMetadata: RAW keeps its partition count in its metadata,
	// where every service reads it.
	StreamMetadata = Feature{Since: "2.10.0", Use: "RAW needs to keep its partition count in the stream's metadata"}
	// PinnedConsumers: each RAW partition is pinned to one normalizer
	// worker at a time (priority groups).
	PinnedConsumers = Feature{Since: "2.11.0", Use: "the normalizer needs to pin each RAW partition to one worker"}
	// ConsumerReset rewinds a consumer to its ack floor in one request
	// (ADR-60). It is not required: RewindProjectConsumer makes the
	// consumer anew on an older server.
	ConsumerReset = Feature{Since: "2.14.0", Use: "the projector needs to rewind its consumer to its ack floor in one request"}
)

// Features are every Feature agentwire requires.
var Features = []Feature{StreamMetadata, PinnedConsumers}

// MinServer is the oldest NATS server every agentwire service runs on:
// the newest Since of the features it requires.
var MinServer = newestSince(Features)

// ErrServerTooOld is what Require fails with.
var ErrServerTooOld = errors.New("upgrade the NATS server to " + MinServer + " or newer")

func newestSince(features []Feature) string {
	newest := ""
	for _, f := range features {
		if newest == "" || !VersionAtLeast(newest, f.Since) {
			newest = f.Since
		}
	}
	return newest
}

// Require returns an error naming the server's version and what it lacks
// when the server nc is connected to is older than a feature needs; the
// error wraps ErrServerTooOld, which says what every service needs, so
// that an upgrade is done once. Retrying does not mend it.
func Require(nc *nats.Conn, features ...Feature) error {
	have := nc.ConnectedServerVersion()
	if _, ok := versionParts(have); !ok {
		return nil // a server that does not say its version is not refused on a guess
	}
	for _, f := range features {
		if !VersionAtLeast(have, f.Since) {
			return fmt.Errorf("the NATS server at %s is %s, older than %s, which %s: %w",
				nc.ConnectedUrlRedacted(), have, f.Since, f.Use, ErrServerTooOld)
		}
	}
	return nil
}

// VersionAtLeast reports whether a server version ("2.14.1",
// "v2.15.0-RC.2") is least ("2.14.0") or later, by major, minor and patch.
// A pre-release counts as its release: a release candidate has its
// features. A version that is not one is never at least anything.
func VersionAtLeast(version, least string) bool {
	have, ok := versionParts(version)
	want, wok := versionParts(least)
	if !ok || !wok {
		return false
	}
	for i := range have {
		if have[i] != want[i] {
			return have[i] > want[i]
		}
	}
	return true
}

func versionParts(v string) ([3]int, bool) {
	var parts [3]int
	v, _, _ = strings.Cut(strings.TrimPrefix(v, "v"), "-")
	v, _, _ = strings.Cut(v, "+")
	fields := strings.Split(v, ".")
	if len(fields) != len(parts) {
		return parts, false
	}
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return parts, false
		}
		parts[i] = n
	}
	return parts, true
}
