// Package sandbox prepares the scratch world a recorded CLI runs in: a
// fresh HOME and working directory, an environment stripped of anything
// that could reach the network or read the developer's own config, and the
// placeholder that replaces the scratch path in recordings.
package sandbox

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Placeholder replaces the scratch directory in every recording, so that
// recordings do not depend on where they were made.
const Placeholder = "/SCRATCH"

// Box is one scratch directory with a home and a work dir inside.
type Box struct {
	// Root is the scratch directory; Placeholder stands for it in recordings.
	Root string
	// Home is $HOME for the CLI.
	Home string
	// Work is the CLI's working directory (a tiny project).
	Work string
}

// New creates a Box under parent (a fresh temporary directory when parent
// is ""), with a small Go project in Work for the agent to look at.
func New(parent, name string) (*Box, error) {
	root, err := os.MkdirTemp(parent, "rec-"+name+"-")
	if err != nil {
		return nil, err
	}
	b := &Box{Root: root, Home: filepath.Join(root, "home"), Work: filepath.Join(root, "project")}
	for _, d := range []string{b.Home, b.Work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	files := map[string]string{
		"go.mod":    "module example.com/demo\n\ngo 1.22\n",
		"main.go":   "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
		"README.md": "# demo\n\nA tiny project for recordings.\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(b.Work, name), []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Env returns a minimal environment for a CLI in the box: PATH, HOME,
// locale and TMPDIR, no proxies, no credentials, no XDG dirs outside the
// box, plus extra ("KEY=value").
func (b *Box) Env(extra ...string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + b.Home,
		"USER=recorder",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"CI=1",
		"TMPDIR=" + b.Root,
		"XDG_CONFIG_HOME=" + filepath.Join(b.Home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(b.Home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(b.Home, ".local", "share"),
		"NO_PROXY=127.0.0.1,localhost",
	}
	return append(env, extra...)
}

// Replacements maps the scratch path (and its symlink-resolved form) to
// Placeholder, longest first.
func (b *Box) Replacements() map[string]string {
	r := map[string]string{b.Root: Placeholder}
	if resolved, err := filepath.EvalSymlinks(b.Root); err == nil && resolved != b.Root {
		r[resolved] = Placeholder
	}
	return r
}

// Scrub applies Replacements to s, longest path first so that no prefix
// of a path is replaced before the path itself.
func (b *Box) Scrub(s string) string {
	r := b.Replacements()
	froms := make([]string, 0, len(r))
	for from := range r {
		froms = append(froms, from)
	}
	sort.Slice(froms, func(i, j int) bool { return len(froms[i]) > len(froms[j]) })
	for _, from := range froms {
		s = strings.ReplaceAll(s, from, r[from])
	}
	return s
}

// Remove deletes the box.
func (b *Box) Remove() error { return os.RemoveAll(b.Root) }
