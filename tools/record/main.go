// Command record re-creates the conformance recordings: it installs the
// pinned agent CLIs from the npm registry, runs each against a scripted
// model server on loopback with a scratch HOME, and writes what they emit
// under testdata/recordings with a MANIFEST.tsv. It is a developer tool:
// CI only reads the committed recordings.
//
//	go run ./tools/record [-only codex,claude,gemini,acp] [-out DIR]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agentwire/agentwire/tools/record/acp"
	"github.com/agentwire/agentwire/tools/record/claude"
	"github.com/agentwire/agentwire/tools/record/codex"
	"github.com/agentwire/agentwire/tools/record/gemini"
	"github.com/agentwire/agentwire/tools/record/internal/manifest"
	"github.com/agentwire/agentwire/tools/record/internal/run"
)

var recorders = []struct {
	name   string
	record func(context.Context, *run.Run) ([]manifest.Entry, error)
}{
	{"codex", codex.Record},
	{"claude", claude.Record},
	{"gemini", gemini.Record},
	{"acp", acp.Record},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := mainErr(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}

func mainErr(ctx context.Context) error {
	var (
		only    = flag.String("only", "", "comma-separated recorders to run (default all: codex,claude,gemini,acp)")
		out     = flag.String("out", "testdata/recordings", "recordings directory")
		npmDir  = flag.String("npm", ".cache/record/npm", "npm prefix to install the pinned CLIs in")
		skipNPM = flag.Bool("no-install", false, "use the CLIs already installed under -npm")
		timeout = flag.Duration("timeout", 90*time.Second, "bound on each CLI invocation")
		keep    = flag.Bool("keep", false, "keep scratch directories")
		only1   = flag.String("scenario", "", "record this scenario alone (claude only), keeping the other recordings")
	)
	flag.Parse()
	names := []string{}
	for _, r := range recorders {
		names = append(names, r.name)
	}
	selected := names
	if *only != "" {
		selected = strings.Split(*only, ",")
		for _, s := range selected {
			if !slices.Contains(names, s) {
				return fmt.Errorf("-only: unknown recorder %q (have %s)", s, strings.Join(names, ","))
			}
		}
	}
	absNPM, err := filepath.Abs(*npmDir)
	if err != nil {
		return err
	}
	if !*skipNPM {
		if err := install(ctx, absNPM); err != nil {
			return err
		}
	}
	absOut, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	if *only1 != "" && !slices.Equal(selected, []string{"claude"}) {
		return errors.New("-scenario needs -only claude: the other recorders record every scenario")
	}
	r := &run.Run{OutDir: absOut, NPMDir: absNPM, Log: os.Stderr, Timeout: *timeout, Keep: *keep, Scenario: *only1}

	if err := os.MkdirAll(absOut, 0o755); err != nil {
		return err
	}
	manifestPath := filepath.Join(absOut, "MANIFEST.tsv")
	var entries []manifest.Entry
	if old, err := manifest.Read(manifestPath); err == nil {
		// Keep the rows of recorders and scenarios not run this time.
		for _, e := range old {
			if !slices.Contains(selected, recorderOf(e)) || (*only1 != "" && e.Scenario != *only1) {
				entries = append(entries, e)
			}
		}
	}
	var failed []string
	for _, rec := range recorders {
		if !slices.Contains(selected, rec.name) {
			continue
		}
		start := time.Now()
		fmt.Fprintf(os.Stderr, "record: %s ...\n", rec.name)
		got, err := rec.record(ctx, r)
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", rec.name, err))
		}
		for i := range got {
			got[i].Note = strings.TrimSpace(got[i].Note)
		}
		entries = append(entries, got...)
		fmt.Fprintf(os.Stderr, "record: %s: %d recordings in %s\n", rec.name, len(got), time.Since(start).Round(time.Second))
	}
	if err := manifest.Write(manifestPath, entries); err != nil {
		return err
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		return fmt.Errorf("%d recorders failed:\n  %s", len(failed), strings.Join(failed, "\n  "))
	}
	return nil
}

// recorderOf says which recorder wrote a manifest row: the first word of
// its set.
func recorderOf(e manifest.Entry) string {
	first, _, _ := strings.Cut(e.Set, "-")
	return first
}

// install puts the pinned CLI versions under dir with npm. Install
// scripts are skipped: Claude Code's cannot link its launcher here, and
// none is needed because the recorders call the platform binaries.
func install(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	args := []string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--ignore-scripts", "--no-save"}
	pkgs := make([]string, 0, len(run.Versions))
	for pkg, v := range run.Versions {
		pkgs = append(pkgs, pkg+"@"+v)
	}
	sort.Strings(pkgs)
	args = append(args, pkgs...)
	// Codex ships its linux binary as an optional dependency under an
	// alias; name it so npm installs it even with --ignore-scripts.
	args = append(args, "@openai/codex-linux-x64@npm:@openai/codex@"+run.Versions["@openai/codex"]+"-linux-x64",
		"@anthropic-ai/claude-code-linux-x64@"+run.Versions["@anthropic-ai/claude-code"])
	fmt.Fprintf(os.Stderr, "record: npm %s\n", strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm install: %w", err)
	}
	return nil
}
