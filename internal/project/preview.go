package project

import "strings"

// A thread's preview is what it is about, when the provider names it not:
// the start of what the user first asked in it. CLIs wrap what the user
// asked in context of their own, which previewed every such thread as the
// same few lines; request takes it off.

// previewRunes is how much of the user's first message a thread's
// preview keeps.
const previewRunes = 200

// firstRunes is s cut after its first n characters, without converting
// the whole of a long prompt (a pasted file) to runes.
func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// requestHeading heads the user's request in a message that Codex's IDE
// extension and desktop app wrap in context of their own ("# Context from
// my IDE setup:" with the open tabs, "# Files mentioned by the user:"):
// every such thread's preview was that context, the same few lines.
const requestHeading = "## My request for Codex:"

// request is what the user asked in a message: what follows
// requestHeading when there is something after it; for a slash command
// Claude Code wrote in its tags (<command-message>, <command-name>,
// <command-args>), the command as the user typed it; the message without
// the IDE context it starts with, when something is left; else the
// message.
func request(text string) string {
	if i := strings.Index(text, requestHeading); i >= 0 {
		if asked := strings.TrimSpace(text[i+len(requestHeading):]); asked != "" {
			return asked
		}
	}
	text = strings.TrimSpace(text)
	if strings.HasPrefix(text, "<command-") {
		if name := tagged(text, "command-name"); name != "" {
			return strings.TrimSpace(name + " " + tagged(text, "command-args"))
		}
	}
	if typed := afterIDEContext(text); typed != "" {
		return typed
	}
	return text
}

// ideContext are the tags in which Claude Code's IDE extensions send what
// the user has open or selected, before what the user typed.
var ideContext = []string{"ide_opened_file", "ide_selection"}

// afterIDEContext is text without the IDE context it starts with.
func afterIDEContext(text string) string {
	for {
		cut := false
		for _, tag := range ideContext {
			if !strings.HasPrefix(text, "<"+tag+">") {
				continue
			}
			_, rest, ok := strings.Cut(text, "</"+tag+">")
			if !ok {
				return text
			}
			text, cut = strings.TrimSpace(rest), true
		}
		if !cut {
			return text
		}
	}
}

// tagged is the text between <tag> and </tag> in s, trimmed, or "".
func tagged(s, tag string) string {
	_, after, ok := strings.Cut(s, "<"+tag+">")
	if !ok {
		return ""
	}
	inner, _, ok := strings.Cut(after, "</"+tag+">")
	if !ok {
		return ""
	}
	return strings.TrimSpace(inner)
}
