package ingest

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Progress follows a file ingest. Files calls it from one goroutine.
type Progress interface {
	// Start is called once with the total size of the inputs.
	Start(totalBytes int64)
	// Add counts frames and the bytes they took.
	Add(bytes int64, frames int)
	// Set says how many bytes of the inputs are done (the end of a file).
	Set(doneBytes int64)
	// Log runs a function that logs a message worth showing either way.
	Log(logf func())
	// File runs a function that logs the end of a file, when the progress
	// display does not show it already.
	File(logf func())
	// Finish is called once at the end.
	Finish()
}

// nopProgress shows no progress: each file gets its log line.
type nopProgress struct{}

func (nopProgress) Start(int64)     {}
func (nopProgress) Add(int64, int)  {}
func (nopProgress) Set(int64)       {}
func (nopProgress) Log(logf func()) { logf() }
func (nopProgress) File(logf func()) {
	logf()
}
func (nopProgress) Finish() {}

// LogProgress logs one line per file and nothing else: for a stderr that
// is not a terminal.
func LogProgress() Progress { return nopProgress{} }

// barProgress draws a progress bar (bytes, rate, ETA, frames).
type barProgress struct {
	w      io.Writer
	mu     sync.Mutex
	bar    *progressbar.ProgressBar
	frames int
	shown  time.Time
}

// BarProgress draws a progress bar on w, a terminal: bytes of the total,
// rate, ETA and the frame count, redrawn at most ten times a second.
func BarProgress(w io.Writer) Progress { return &barProgress{w: w} }

func (b *barProgress) Start(total int64) {
	b.bar = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(b.w),
		progressbar.OptionSetDescription(describe(0)),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionUseANSICodes(true),
		progressbar.OptionClearOnFinish(),
	)
}

func describe(frames int) string { return fmt.Sprintf("%d frames", frames) }

func (b *barProgress) Add(n int64, frames int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.frames += frames
	if now := time.Now(); now.Sub(b.shown) > 100*time.Millisecond {
		b.shown = now
		b.bar.Describe(describe(b.frames))
	}
	_ = b.bar.Add64(n) // drawing on a terminal; nothing to do if it fails
}

func (b *barProgress) Set(done int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bar.Describe(describe(b.frames))
	_ = b.bar.Set64(done)
}

func (b *barProgress) Log(logf func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	_ = b.bar.Clear()
	logf()
}

func (b *barProgress) File(func()) {}

func (b *barProgress) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	_ = b.bar.Finish()
}
