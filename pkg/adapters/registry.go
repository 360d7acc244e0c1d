package adapters

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentwire/agentwire/pkg/adapters/acp"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/adapters/claudelog"
	"github.com/agentwire/agentwire/pkg/adapters/claudestream"
	"github.com/agentwire/agentwire/pkg/adapters/codexappserver"
	"github.com/agentwire/agentwire/pkg/adapters/codexexec"
	"github.com/agentwire/agentwire/pkg/adapters/codexrollout"
	"github.com/agentwire/agentwire/pkg/adapters/geministream"
)

// registry holds every adapter by dialect name.
var registry = func() map[string]adapter.Adapter {
	m := map[string]adapter.Adapter{}
	for _, a := range []adapter.Adapter{
		acp.Adapter{},
		claudelog.Adapter{},
		claudestream.Adapter{},
		codexappserver.Adapter{},
		codexexec.Adapter{},
		codexrollout.Adapter{},
		geministream.Adapter{},
	} {
		m[a.Dialect()] = a
	}
	return m
}()

// Lookup returns the adapter of a dialect, or an error that lists the
// dialects there are.
func Lookup(dialect string) (adapter.Adapter, error) {
	a, ok := registry[dialect]
	if !ok {
		return nil, fmt.Errorf("unknown dialect %q (known: %s)", dialect, strings.Join(Dialects(), ", "))
	}
	return a, nil
}

// Dialects lists the registered dialects, sorted.
func Dialects() []string {
	out := make([]string, 0, len(registry))
	for d := range registry {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}
