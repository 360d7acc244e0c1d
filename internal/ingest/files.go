package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentwire/agentwire/pkg/adapters"
)

// AutoDialect asks for the dialect of each file to be sniffed.
const AutoDialect = "auto"

// Input is one file to ingest.
type Input struct {
	// Path is the file's absolute path.
	Path string
	// Size is its size in bytes when it was found.
	Size int64
	// Dialect is the dialect of its frames, or AutoDialect.
	Dialect string
}

// frameExtensions are the file names a directory walk picks up.
var frameExtensions = []string{".jsonl", ".json", ".ndjson"}

// ErrNoInput is returned by Discover when a path does not exist.
var ErrNoInput = errors.New("no such file or directory")

// Discover expands paths into the files to ingest: a file is taken as it
// is, a directory is walked recursively for *.jsonl, *.json and *.ndjson
// files (in lexical order). dialect is given to every file found.
func Discover(paths []string, dialect string) ([]Input, error) {
	var out []Input
	seen := map[string]bool{}
	add := func(path string, size int64) {
		if !seen[path] {
			seen[path] = true
			out = append(out, Input{Path: path, Size: size, Dialect: dialect})
		}
	}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		st, err := os.Stat(abs)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", p, ErrNoInput)
		}
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			add(abs, st.Size())
			continue
		}
		err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !slices.Contains(frameExtensions, strings.ToLower(filepath.Ext(path))) {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			if info.Mode().IsRegular() {
				add(path, info.Size())
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("walk %s: %w", p, err)
		}
	}
	return out, nil
}

// Location is a directory where an agent CLI keeps its logs.
type Location struct {
	// Dir is the directory.
	Dir string
	// Dialect of the files in it, or AutoDialect.
	Dialect string
	// Agent names the CLI, for messages.
	Agent string
}

// DefaultLocations returns where the agent CLIs keep their session logs,
// for a home directory and a $CODEX_HOME ("" when unset):
//
//   - Claude Code: ~/.claude/projects/<project>/<session>.jsonl (claude-log);
//   - Codex: $CODEX_HOME/sessions (default ~/.codex/sessions), as
//     YYYY/MM/DD/rollout-*.jsonl (codex-rollout);
//   - Gemini CLI: ~/.gemini/tmp/<sha256 of the project path>/, which holds
//     chats/session-*.json (one pretty-printed JSON document per
//     conversation), logs.json (a JSON array of the prompts) and
//     checkpoint-*.json. None of those is a line-per-frame dialect, so they
//     are sniffed (auto) and skipped with a warning unless a later Gemini
//     version writes stream-json lines there.
func DefaultLocations(home, codexHome string) []Location {
	if codexHome == "" {
		codexHome = filepath.Join(home, ".codex")
	}
	return []Location{
		{Dir: filepath.Join(home, ".claude", "projects"), Dialect: adapters.DialectClaudeLog, Agent: "Claude Code"},
		{Dir: filepath.Join(codexHome, "sessions"), Dialect: adapters.DialectCodexRollout, Agent: "Codex"},
		{Dir: filepath.Join(home, ".gemini", "tmp"), Dialect: AutoDialect, Agent: "Gemini CLI"},
	}
}

// ExistingLocations keeps the locations whose directory exists.
func ExistingLocations(locs []Location) []Location {
	var out []Location
	for _, l := range locs {
		if st, err := os.Stat(l.Dir); err == nil && st.IsDir() {
			out = append(out, l)
		}
	}
	return out
}

// sniffBudget bounds what sniffing a file reads.
const (
	sniffMaxLines = 64
	sniffMaxBytes = 8 << 20
)

// SniffFile guesses the dialect of a file from its first lines.
func SniffFile(path string) (dialect string, ok bool, err error) {
	f, err := os.Open(path) //nolint:gosec // reading the files the user names is the point
	if err != nil {
		return "", false, err
	}
	defer func() { _ = f.Close() }() // read-only
	lines, err := firstLines(f, sniffMaxLines, sniffMaxBytes)
	if err != nil {
		return "", false, fmt.Errorf("sniff %s: %w", path, err)
	}
	d, ok := adapters.Sniff(lines)
	return d, ok, nil
}

// firstLines reads up to n non-empty lines, or maxBytes, of r.
func firstLines(r io.Reader, n, maxBytes int) ([][]byte, error) {
	br := bufio.NewReaderSize(r, readBufferSize)
	var lines [][]byte
	total := 0
	for len(lines) < n && total < maxBytes {
		line, err := br.ReadBytes('\n')
		total += len(line)
		if l := bytes.TrimSpace(line); len(l) > 0 {
			lines = append(lines, l)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return lines, nil
}

// FileSessionKey is the session key of a file: "file:" + its absolute path.
func FileSessionKey(absPath string) string { return "file:" + filepath.ToSlash(absPath) }

// FileSummary is what ingesting files did.
type FileSummary struct {
	Files, Skipped int
	Frames, Bytes  uint64
	Elapsed        time.Duration
}

// String is the one-line summary printed at the end.
func (s FileSummary) String() string {
	skipped := ""
	if s.Skipped > 0 {
		skipped = fmt.Sprintf(" (%d skipped)", s.Skipped)
	}
	return fmt.Sprintf("ingested %d files%s, %d frames, %s in %s", s.Files, skipped, s.Frames, humanBytes(s.Bytes), s.Elapsed.Round(time.Millisecond))
}

func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// FileOptions tune Files.
type FileOptions struct {
	// SessionKey overrides the session key of a single input.
	SessionKey string
	// Progress reports progress; nil reports nothing.
	Progress Progress
}

// Files ingests inputs one after the other, each file one session, and
// flushes. A file whose dialect cannot be sniffed is skipped with a
// warning. When ctx ends, what was read is still flushed (for a few
// seconds) before Files returns ctx's error.
func (in *Ingester) Files(ctx context.Context, inputs []Input, opts FileOptions) (FileSummary, error) {
	start := in.now()
	if opts.SessionKey != "" && len(inputs) > 1 {
		return FileSummary{}, fmt.Errorf("a session key names one input; got %d files", len(inputs))
	}
	prog := opts.Progress
	if prog == nil {
		prog = nopProgress{}
	}
	var total int64
	for _, f := range inputs {
		total += f.Size
	}
	prog.Start(total)
	var sum FileSummary
	var done int64
	err := func() error {
		for _, f := range inputs {
			frames, size, skipped, err := in.file(ctx, f, opts.SessionKey, prog)
			done += f.Size
			prog.Set(done)
			if err != nil {
				return err
			}
			if skipped {
				sum.Skipped++
				continue
			}
			sum.Files++
			sum.Frames += frames
			sum.Bytes += size
		}
		return nil
	}()
	fctx, cancel := flushContext(ctx)
	defer cancel()
	if ferr := in.Pub.Flush(fctx); ferr != nil && err == nil {
		err = fmt.Errorf("flush: %w", ferr)
	}
	prog.Finish()
	sum.Elapsed = in.now().Sub(start)
	return sum, err
}

// flushContext is ctx, or when ctx has ended a short grace period to
// store what was already read.
func flushContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
}

func (in *Ingester) file(ctx context.Context, f Input, key string, prog Progress) (frames, size uint64, skipped bool, err error) {
	dialect := f.Dialect
	if dialect == "" || dialect == AutoDialect {
		d, ok, err := SniffFile(f.Path)
		if err != nil {
			return 0, 0, false, err
		}
		if !ok {
			prog.Log(func() { in.Log.Warn("skipping a file whose dialect cannot be told; pass --dialect", "path", f.Path) })
			return 0, 0, true, nil
		}
		prog.Log(func() { in.Log.Info("sniffed dialect", "path", f.Path, "dialect", d) })
		dialect = d
	}
	if key == "" {
		key = FileSessionKey(f.Path)
	}
	r, err := os.Open(f.Path)
	if err != nil {
		return 0, 0, false, fmt.Errorf("ingest %s: %w", f.Path, err)
	}
	defer func() { _ = r.Close() }() // read-only
	s := Session{Key: key, Dialect: dialect, Backlog: true}
	s.WrittenBy, _ = WrittenFile(r)
	frames, size, err = in.Reader(ctx, r, s, func(n int) { prog.Add(int64(n)+1, 1) })
	if err != nil {
		return frames, size, false, fmt.Errorf("ingest %s: %w", f.Path, err)
	}
	prog.File(func() {
		in.Log.Info("ingested file", "path", f.Path, "dialect", dialect, "session", key, "frames", frames, "bytes", size)
	})
	return frames, size, false, nil
}
