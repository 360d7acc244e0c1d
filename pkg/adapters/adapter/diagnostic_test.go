package adapter_test

import (
	"testing"
	"time"

	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// FuzzDiagnostic maps arbitrary frames as diagnostics: never a panic, a
// frame that does not start as one is left to the adapter, and every
// event validates and keeps the frame as raw.
func FuzzDiagnostic(f *testing.F) {
	for _, s := range []string{
		`{"agentwire":"stderr","line":"warning"}`, `{"agentwire":"stderr","lineBase64":"/w=="}`,
		`{"agentwire":"exit","code":0}`, `{"agentwire":"exit","code":137,"signal":"SIGKILL"}`,
		`{"agentwire":"exit","code":-1,"error":"wait"}`, `{"agentwire":"exit"}`, `{"agentwire":7}`, `{"agentwire":`,
		`{"type":"turn.started"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr := adapter.Frame{Bytes: b, Dialect: "codex-exec", Tenant: "acme", SessionKey: "fuzz", Ordinal: 1,
			ReceivedAt: time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)}
		evs, ok := adapter.Diagnostic(fr, canonical.ProviderCodex)
		if !ok {
			if len(evs) > 0 {
				t.Fatal("events for a frame that is no diagnostic")
			}
			return
		}
		if len(evs) == 0 {
			t.Fatal("a diagnostic frame yields no event")
		}
		for _, e := range evs {
			if err := canonical.Validate(e); err != nil {
				t.Fatalf("invalid %s: %v", e.Type(), err)
			}
			if _, err := canonical.Encode(e); err != nil {
				t.Fatalf("%s does not encode: %v", e.Type(), err)
			}
		}
	})
}
