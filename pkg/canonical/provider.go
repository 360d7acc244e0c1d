package canonical

import (
	"strings"
)

// Provider names the runtime that emitted a frame. It is a slug: it becomes
// a NATS subject token (`runtime.<provider>.<type>`), so it can never hold
// `.`, `*`, `>` or whitespace. The four known providers have constants;
// other ACP agents use their own slug (see ProviderFromName).
type Provider string

// Known providers.
const (
	ProviderCodex  Provider = "codex"
	ProviderClaude Provider = "claude"
	ProviderCursor Provider = "cursor"
	ProviderGemini Provider = "gemini"
)

// maxSlugLen bounds slugs so subjects and ids stay readable; 64 is far above
// any real provider or tenant name.
const maxSlugLen = 64

// KnownProviders returns the providers agentwire has adapters for.
func KnownProviders() []Provider {
	return []Provider{ProviderCodex, ProviderClaude, ProviderCursor, ProviderGemini}
}

// ParseProvider returns s as a Provider, or an error wrapping ErrInvalidSlug
// that says what is wrong with it.
func ParseProvider(s string) (Provider, error) {
	if err := checkSlug("provider", s); err != nil {
		return "", err
	}
	return Provider(s), nil
}

// Valid reports whether p is a valid slug.
func (p Provider) Valid() bool { return checkSlug("provider", string(p)) == nil }

// ProviderFromName turns a free-form agent name, such as the agentInfo.name
// of an ACP initialize response ("Claude Code", "@zed-industries/claude-code-acp"),
// into a provider slug: lower case, runs of other characters folded into one
// '-', trimmed, at most 64 bytes. It returns "" when nothing usable is left.
func ProviderFromName(name string) Provider {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if isSlugAlnum(r) {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > maxSlugLen {
		s = strings.TrimRight(s[:maxSlugLen], "-")
	}
	return Provider(s)
}

// ValidateTenant checks that a tenant id can be used as a subject token and
// a row key: the same slug rules as providers.
func ValidateTenant(tenant string) error { return checkSlug("tenant", tenant) }

func isSlugAlnum(r rune) bool { return ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') }

// checkSlug enforces `[a-z0-9]([a-z0-9_-]*[a-z0-9])?`, at most 64 bytes:
// lower case so that subjects and ids do not depend on spelling.
func checkSlug(field, s string) error {
	fail := func(rule string) error {
		return &FieldError{Field: field, Rule: rule, Value: s, err: ErrInvalidSlug}
	}
	switch {
	case s == "":
		return fail("is required")
	case len(s) > maxSlugLen:
		return fail("must be at most 64 bytes")
	case !isSlugAlnum(rune(s[0])) || !isSlugAlnum(rune(s[len(s)-1])):
		return fail("must start and end with a lower-case letter or digit")
	}
	for _, r := range s {
		if !isSlugAlnum(r) && r != '-' && r != '_' {
			return fail("may only contain a-z, 0-9, '-' and '_'")
		}
	}
	return nil
}
