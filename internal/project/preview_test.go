package project

import (
	"strings"
	"testing"
)

func TestRequest(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, message, want string }{
		{"a plain prompt, trimmed", "  fix the test \n", "fix the test"},
		{"Codex IDE context", "# Context from my IDE setup:\n\n## Open tabs:\n- a.go: a.go\n\n## My request for Codex:\nwhy is it slow?\n", "why is it slow?"},
		{"Codex desktop files", "# Files mentioned by the user:\n\n## shot.png: /tmp/shot.png\n\n## My request for Codex:\nmatch the mockup", "match the mockup"},
		{"a heading with nothing after it is all there is", "# Context from my IDE setup:\n## My request for Codex:\n", "# Context from my IDE setup:\n## My request for Codex:"},
		{"a slash command with arguments", "<command-message>review is running…</command-message>\n<command-name>/review</command-name>\n<command-args>auth</command-args>", "/review auth"},
		{"a slash command without arguments", "<command-name>/init</command-name>\n<command-message>init is analyzing your codebase…</command-message>", "/init"},
		{"command tags inside a prompt are the prompt", "why does <command-name>/x</command-name> fail?", "why does <command-name>/x</command-name> fail?"},
		{"IDE context, then the typed text", "<ide_opened_file>The user opened a.ts</ide_opened_file>\n<ide_selection>lines 1-2</ide_selection>\nfix it", "fix it"},
		{"IDE context alone is all there is", "<ide_opened_file>The user opened a.ts</ide_opened_file>", "<ide_opened_file>The user opened a.ts</ide_opened_file>"},
		{"an IDE tag never closed", "<ide_selection>lines 1-2\nfix it", "<ide_selection>lines 1-2\nfix it"},
	}
	for _, tt := range tests {
		if got := request(tt.message); got != tt.want {
			t.Errorf("%s: request(%q) = %q, want %q", tt.name, tt.message, got, tt.want)
		}
	}
}

// FuzzRequest: never a panic, and a message with anything in it previews
// as something.
func FuzzRequest(f *testing.F) {
	f.Add("## My request for Codex:")
	f.Add("<command-name>/x</command-name><command-args>")
	f.Add("<ide_opened_file></ide_opened_file><ide_selection>")
	f.Fuzz(func(t *testing.T, message string) {
		if got := request(message); (got == "") != (strings.TrimSpace(message) == "") {
			t.Errorf("request(%q) = %q", message, got)
		}
	})
}
