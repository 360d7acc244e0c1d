package normalize

import "github.com/agentwire/agentwire/pkg/adapters/adapter"

// WithMapHook returns c with a hook run before each frame is mapped.
func WithMapHook(c Config, hook func(adapter.Frame)) Config {
	c.mapHook = hook
	return c
}
