package bus_test

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/natstest"
)

func TestVersionAtLeast(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		version, min string
		want         bool
	}{
		{"2.14.0", "2.14.0", true},
		{"2.14.1", "2.14.0", true},
		{"2.15.2", "2.14.0", true},
		{"3.0.0", "2.14.0", true},
		{"2.13.9", "2.14.0", false},
		{"2.9.10", "2.10.0", false}, // by number, not by text
		{"2.10.0", "2.9.10", true},
		{"1.99.99", "2.0.0", false},
		{"v2.14.0", "2.14.0", true},
		{"2.14.0-RC.2", "2.14.0", true}, // a release candidate has its release's features
		{"2.14.0-beta", "2.14.1", false},
		{"2.14.0+build", "2.14.0", true},
		{"", "2.10.0", false},
		{"2.14", "2.14.0", false},
		{"2.14.x", "2.14.0", false},
		{"2.-1.0", "2.0.0", false},
		{"2.14.0", "not a version", false},
	} {
		require.Equal(t, c.want, bus.VersionAtLeast(c.version, c.min), "%q at least %q", c.version, c.min)
	}
}

// TestMinServer: the version every service runs on is the newest any
// feature needs, so that the upgrade an error asks for is the last one.
// Pinned: README and docker-compose.yml name it.
func TestMinServer(t *testing.T) {
	t.Parallel()
	require.Equal(t, "2.11.0", bus.MinServer)
	require.ErrorContains(t, bus.ErrServerTooOld, "2.11.0 or newer")
}

// TestRequire asks a real server: the embedded one has every feature,
// and a feature of a later release is refused with what to do.
func TestRequire(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	nc := natstest.Conn(t, srv)
	require.NoError(t, bus.Require(nc, bus.Features...))
	require.True(t, bus.VersionAtLeast(server.VERSION, bus.MinServer), "the embedded server is %s", server.VERSION)

	later := bus.Feature{Since: "99.0.0", Use: "a test needs something"}
	err := bus.Require(nc, bus.StreamMetadata, later)
	require.ErrorIs(t, err, bus.ErrServerTooOld)
	require.EqualError(t, err, "the NATS server at "+nc.ConnectedUrlRedacted()+" is "+server.VERSION+
		", older than 99.0.0, which a test needs something: upgrade the NATS server to "+bus.MinServer+" or newer")
}
