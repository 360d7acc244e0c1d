package project

import "github.com/agentwire/agentwire/pkg/canonical"

// WithFoldHook returns c with a hook run before each event is folded.
func WithFoldHook(c Config, hook func(*canonical.Event)) Config {
	c.foldHook = hook
	return c
}
