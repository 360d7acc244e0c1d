// Package tap runs an agent process over stdio and records every message
// that crosses the pipe, in the order it crossed, as tap lines:
//
//	{"dir":"agent","msg":<frame>}   written by the agent on stdout
//	{"dir":"client","msg":<frame>}  written by us, the controlling app, on stdin
//
// A stdout line that is not JSON is recorded with msg as a JSON string, so
// nothing the agent printed is lost.
package tap

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"sync"
	"time"
)

// Frame is one message the agent wrote.
type Frame struct {
	// Raw is the line as written, without the newline.
	Raw json.RawMessage
	// Obj is the line decoded as a JSON object (nil when it is not one).
	Obj map[string]any
}

// Str returns the string at a path of object keys, or "".
func (f Frame) Str(path ...string) string {
	v, _ := Get(f.Obj, path...).(string)
	return v
}

// Get walks nested objects by key.
func Get(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// Session is a running agent process whose stdio is recorded.
type Session struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	frames chan Frame
	done   chan struct{}

	mu    sync.Mutex
	lines [][]byte
	err   error
}

// Start launches cmd with its stdin and stdout piped through the recorder.
// stderr goes to stderr (a log file, typically). The process is killed when
// ctx ends.
func Start(ctx context.Context, cmd *exec.Cmd, stderr io.Writer) (*Session, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("tap: stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("tap: stdout: %w", err)
	}
	cmd.Stderr = stderr
	cmd.Cancel = func() error { return cmd.Process.Kill() }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("tap: start %s: %w", cmd.Path, err)
	}
	s := &Session{cmd: cmd, stdin: stdin, frames: make(chan Frame, 4096), done: make(chan struct{})}
	go s.read(stdout)
	go func() {
		<-ctx.Done()
		_ = stdin.Close()
	}()
	return s, nil
}

func (s *Session) read(stdout io.Reader) {
	defer close(s.frames)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		line := bytes.TrimRight(sc.Bytes(), "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		f := Frame{Raw: append(json.RawMessage(nil), line...)}
		if !json.Valid(line) {
			quoted, _ := json.Marshal(string(line))
			f.Raw = quoted
		} else {
			_ = json.Unmarshal(line, &f.Obj)
		}
		s.record("agent", f.Raw)
		s.frames <- f
	}
	if err := sc.Err(); err != nil {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
	}
}

func (s *Session) record(dir string, msg json.RawMessage) {
	var b bytes.Buffer
	b.WriteString(`{"dir":"` + dir + `","msg":`)
	b.Write(msg)
	b.WriteString("}")
	s.mu.Lock()
	s.lines = append(s.lines, b.Bytes())
	s.mu.Unlock()
}

// Send writes one message to the agent's stdin and records it. msg is
// marshalled compactly unless it already is a json.RawMessage.
func (s *Session) Send(msg any) error {
	b, ok := msg.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(msg); err != nil {
			return fmt.Errorf("tap: encode message: %w", err)
		}
	}
	// Record before writing: the agent may answer before Write returns.
	s.record("client", b)
	if _, err := s.stdin.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("tap: write to agent: %w", err)
	}
	return nil
}

// ErrClosed is returned by Next when the agent closed its stdout.
var ErrClosed = errors.New("tap: agent closed stdout")

// Next returns the next frame the agent writes, waiting until ctx ends.
func (s *Session) Next(ctx context.Context) (Frame, error) {
	select {
	case f, ok := <-s.frames:
		if !ok {
			return Frame{}, ErrClosed
		}
		return f, nil
	case <-ctx.Done():
		return Frame{}, fmt.Errorf("tap: waiting for the agent: %w", ctx.Err())
	}
}

// CloseStdin signals EOF to the agent.
func (s *Session) CloseStdin() error { return s.stdin.Close() }

// Wait waits for the process to exit (after CloseStdin, or on its own),
// draining what it still writes, and returns its exit error.
func (s *Session) Wait(ctx context.Context) error {
	for {
		if _, err := s.Next(ctx); err != nil {
			break
		}
	}
	return s.cmd.Wait()
}

// Lines returns the tap lines recorded so far.
func (s *Session) Lines() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.lines...)
}

// WriteFile writes the recorded tap lines to path, one per line, after
// replacing every occurrence of each key of replace with its value.
func (s *Session) WriteFile(path string, replace map[string]string) (int, error) {
	return WriteLines(path, s.Lines(), replace)
}

// ReadLines reads the lines of a file an agent wrote (a log, a rollout),
// without their newlines, for WriteLines.
func ReadLines(path string) ([][]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var lines [][]byte
	for l := range bytes.SplitSeq(bytes.TrimRight(b, "\n"), []byte("\n")) {
		lines = append(lines, l)
	}
	return lines, nil
}

// WriteLines writes lines to path (creating its directory), each ending in
// a newline, applying replace to every line.
func WriteLines(path string, lines [][]byte, replace map[string]string) (int, error) {
	// Longest first, so a path is replaced before any prefix of it.
	froms := make([]string, 0, len(replace))
	for from := range replace {
		froms = append(froms, from)
	}
	sort.Slice(froms, func(i, j int) bool { return len(froms[i]) > len(froms[j]) })
	var b bytes.Buffer
	for _, l := range lines {
		for _, from := range froms {
			l = bytes.ReplaceAll(l, []byte(from), []byte(replace[from]))
		}
		b.Write(l)
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(dirOf(path), 0o755); err != nil {
		return 0, err
	}
	return len(lines), os.WriteFile(path, b.Bytes(), 0o644)
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[:i]
		}
	}
	return "."
}
