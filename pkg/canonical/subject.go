package canonical

// SubjectPrefix is the first token of every canonical event subject.
const SubjectPrefix = "runtime"

// Subject returns the NATS subject an event of kind k from provider p is
// published on: `runtime.<provider>.<kind>`, such as
// "runtime.codex.turn.completed". Subscribers filter with wildcards:
// "runtime.*.turn.>" or "runtime.codex.>". The provider must be valid (see
// ParseProvider), which keeps it a single token.
func Subject(p Provider, k Kind) string { return SubjectPrefix + "." + string(p) + "." + string(k) }

// Subject returns the subject e is published on.
func (e Event) Subject() string { return Subject(e.Provider, e.Type()) }
