package codexrollout

import "testing"

// TestContextFragment: a user-role message is context only when it lies
// wholly inside one of Codex's markers; a user's request that merely
// mentions one, or the IDE's preamble around a request, stays a message.
func TestContextFragment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text, want string
	}{
		{"<environment_context>\n  <cwd>/p</cwd>\n</environment_context>", "environment context"},
		{"  \n<user_instructions>be brief</user_instructions>\n", "user instructions"},
		{"# AGENTS.md instructions for /p\n\n<INSTRUCTIONS>\nrun make\n</INSTRUCTIONS>", "AGENTS.md instructions"},
		{"<turn_aborted>\ninterrupted\n</turn_aborted>", "turn aborted"},
		{"<environment_context></environment_context> and now fix the test", ""},
		{"please read <environment_context>", ""},
		{"# Context from my IDE setup:\n\n## My request for Codex:\nfix it", ""},
		{"<environment_context>", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, ok := contextFragment(tt.text)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("contextFragment(%q) = %q, %v; want %q", tt.text, got, ok, tt.want)
		}
	}
}
