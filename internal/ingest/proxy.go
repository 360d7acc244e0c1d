package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
)

// ProxySessionKey is the session key of a proxied agent: "proxy:" + its
// base name + ":" + the start time (RFC 3339, nanoseconds, UTC).
func ProxySessionKey(command string, start time.Time) string {
	return "proxy:" + filepath.Base(command) + ":" + start.UTC().Format(time.RFC3339Nano)
}

// DefaultBufferMax is the default size of a proxy's on-disk buffer.
const DefaultBufferMax = 256 << 20

// DefaultBufferDir is the default directory of the proxies' on-disk
// buffers: agentwire/proxy in the user's state directory
// ($XDG_STATE_HOME, else ~/.local/state; the user config directory on
// macOS and Windows). Not the cache directory: frames NATS did not store
// before a proxy exited wait there for the next run, and must not be
// cleaned away with caches.
func DefaultBufferDir() string {
	if dir := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "agentwire", "proxy")
	}
	switch runtime.GOOS {
	case "darwin", "ios", "windows", "plan9":
		if dir, err := os.UserConfigDir(); err == nil {
			return filepath.Join(dir, "agentwire", "proxy")
		}
	default:
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, ".local", "state", "agentwire", "proxy")
		}
	}
	return filepath.Join(os.TempDir(), "agentwire", "proxy")
}

// ProxyOptions say what Proxy runs and where its streams go.
type ProxyOptions struct {
	// Args is the agent command and its arguments.
	Args []string
	// Connect, when the Ingester has no Publisher yet, connects to NATS
	// from the publishing goroutine, retried until it succeeds: the agent
	// starts at once and its frames wait in the buffer while NATS is away,
	// at launch as later.
	Connect func(ctx context.Context) (*Publisher, error)
	// Session is the session of its frames (Key "" means ProxySessionKey).
	Session Session
	// Tenant owns the frames (the Ingester's Publisher's tenant when it
	// has one); it is kept with the buffer for whoever publishes what the
	// proxy left.
	Tenant string
	// Stdin is what the controlling app writes to the agent.
	Stdin io.Reader
	// Stdout and Stderr receive what the agent writes (nil: discarded).
	Stdout, Stderr io.Writer
	// Signals are forwarded to the agent while it runs.
	Signals <-chan os.Signal
	// KillAfter is how long the agent may run on after ctx ends and it was
	// sent SIGTERM, before it is killed. Default 10 seconds.
	KillAfter time.Duration
	// BufferDir holds the on-disk buffer (a directory per run in it), and
	// what earlier runs left there (see ResumeSpools): once connected,
	// Proxy publishes that too. Default DefaultBufferDir.
	BufferDir string
	// BufferMax bounds the on-disk buffer in bytes; default DefaultBufferMax.
	BufferMax int64
	// DrainTimeout is how long Proxy waits, after the agent exited, for
	// the frames still buffered to be stored, and those earlier runs left.
	// What is not stored by then stays in BufferDir. Default 10 seconds.
	DrainTimeout time.Duration
}

// ProxyResult is what Proxy did.
type ProxyResult struct {
	// SessionKey is the session the frames went to.
	SessionKey string
	// ExitCode is the agent's exit status (128+n for signal n).
	ExitCode int
	// Agent, Client and Stderr count the messages of each stream.
	Agent, Client, Stderr uint64
	// Published counts the frames stored in RAW, the exit frame included.
	Published uint64
	// Dropped counts the frames lost because the buffer was full.
	Dropped uint64
	// Left counts the frames not stored when the drain timed out; they
	// stay on disk in LeftIn, for the next run or ResumeSpools.
	Left uint64
	// LeftIn is the directory of the frames left ("" when none are).
	LeftIn string
	// Resumed counts the frames of earlier runs' buffers published.
	Resumed uint64
}

// proxy is the state of one Proxy call.
type proxy struct {
	in    *Ingester
	opts  ProxyOptions
	s     Session
	spool *Spool

	mu       sync.Mutex // the sequencer: frames are queued in the order they crossed
	queue    []spoolRecord
	queued   int64
	counts   [3]uint64
	overflow bool
	wake     chan struct{}
	closed   bool
}

// Proxy runs an agent that speaks a two-way protocol over stdio between
// the controlling app and the agent: it forwards opts.Stdin to the agent
// and the agent's stdout and stderr to opts.Stdout and opts.Stderr, byte
// for byte, and tees every newline-delimited message into one session,
// agent messages with direction "agent", the app's with "client", stderr
// lines as stderr diagnostic frames, and the exit status as the last
// frame. Ordinals follow the order messages crossed the proxy.
//
// Forwarding never waits on NATS: messages go through a queue in memory
// to a bounded buffer on disk, from which one goroutine publishes them in
// order, waiting out NATS outages. When the buffer is full a frame is
// dropped, counted and said once on the log; the agent is never blocked.
// Signals from opts.Signals are forwarded; EOF on opts.Stdin closes the
// agent's stdin.
//
// After the agent exits, Proxy waits up to opts.DrainTimeout for the
// frames still buffered to be stored. Those that are not stay in the
// buffer directory with their session and ordinals (ProxyResult.LeftIn),
// and the next Proxy with the same BufferDir publishes them once it is
// connected (ResumeSpools), beside its own frames; so does the buffer of
// a proxy that crashed.
func (in *Ingester) Proxy(ctx context.Context, opts ProxyOptions) (ProxyResult, error) {
	if len(opts.Args) == 0 {
		return ProxyResult{}, errors.New("proxy: no command")
	}
	start := in.now()
	s := opts.Session
	if s.Key == "" {
		s.Key = ProxySessionKey(opts.Args[0], start)
	}
	res := ProxyResult{SessionKey: s.Key}
	if opts.KillAfter == 0 {
		opts.KillAfter = 10 * time.Second
	}
	if opts.BufferDir == "" {
		opts.BufferDir = DefaultBufferDir()
	}
	if opts.BufferMax == 0 {
		opts.BufferMax = DefaultBufferMax
	}
	if opts.DrainTimeout == 0 {
		opts.DrainTimeout = 10 * time.Second
	}
	if opts.Stdout == nil {
		opts.Stdout = io.Discard
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	tenant := opts.Tenant
	if in.Pub != nil {
		tenant = in.Pub.Tenant()
	}
	if tenant == "" {
		return res, errors.New("proxy: no tenant")
	}
	sum := sha256.Sum256([]byte(s.Key))
	// Named after the session and the start, so that runs that share a
	// --session still get buffers of their own.
	spool, err := createSpool(opts.BufferDir, hex.EncodeToString(sum[:6])+"-"+strconv.FormatInt(start.UnixNano(), 36), SpoolMeta{
		Tenant: tenant, Session: s.Key, Dialect: s.Dialect, Provider: string(in.Provider), Started: start,
	}, opts.BufferMax)
	if err != nil {
		return res, fmt.Errorf("proxy: %w", err)
	}
	if opts.Session.Key != "" && in.Pub != nil {
		spool.continueAfter(in.lastOrdinal(ctx, s.Key))
	}
	p := &proxy{in: in, opts: opts, s: s, spool: spool, wake: make(chan struct{}, 1)}
	if b := modelFrame(opts.Args); b != nil {
		p.queue = append(p.queue, spoolRecord{at: start, data: b, diagnostic: true})
	}

	cmd := exec.CommandContext(context.WithoutCancel(ctx), opts.Args[0], opts.Args[1:]...) //nolint:gosec // running the user's agent is the point
	setProcessGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		_ = spool.Remove()
		return res, fmt.Errorf("proxy %s: %w", opts.Args[0], err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		_ = spool.Remove()
		return res, fmt.Errorf("proxy %s: %w", opts.Args[0], err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		_ = spool.Remove()
		return res, fmt.Errorf("proxy %s: %w", opts.Args[0], err)
	}
	if err := cmd.Start(); err != nil {
		_ = spool.Remove()
		return res, fmt.Errorf("proxy: %w", err)
	}
	in.Log.Info("started", "command", opts.Args[0], "pid", cmd.Process.Pid, "session", s.Key, "dialect", s.Dialect)

	spooled := make(chan struct{})
	go func() { defer close(spooled); p.spoolQueue() }()
	// Publishing outlives ctx: the frames of a canceled run are still
	// worth storing, until the drain timeout.
	pubCtx, stopPublishing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopPublishing()
	var publishing sync.WaitGroup
	var pumpErr error
	var published uint64
	publishing.Go(func() {
		published, pumpErr = p.pump(pubCtx, func() {
			// Connected: what earlier runs left goes out beside this
			// run's frames (other sessions: no order between them). Added
			// while the pump is counted, so before Wait can return.
			publishing.Go(func() { res.Resumed = p.resumeLeftovers(pubCtx) })
		})
	})

	if opts.Stdin != nil {
		go func() {
			p.forward(opts.Stdin, stdin, adapter.FromClient)
			_ = stdin.Close() // EOF passes through
		}()
	} else {
		_ = stdin.Close()
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); p.forward(stdout, opts.Stdout, adapter.FromAgent) }()
	go func() { defer readers.Done(); p.forward(stderr, opts.Stderr, "") }()
	waited := make(chan error, 1)
	go func() { readers.Wait(); waited <- cmd.Wait() }()

	var waitErr error
	ctxDone := ctx.Done()
	var kill <-chan time.Time
loop:
	for {
		select {
		case sig := <-opts.Signals:
			in.Log.Info("forwarding signal", "signal", sig)
			_ = cmd.Process.Signal(sig)
		case <-ctxDone:
			ctxDone = nil
			_ = cmd.Process.Signal(syscall.SIGTERM)
			kill = time.After(opts.KillAfter)
		case <-kill:
			in.Log.Warn("the agent did not stop; killing it", "after", opts.KillAfter)
			_ = cmd.Process.Kill()
		case waitErr = <-waited:
			break loop
		}
	}

	exit := exitFrame(cmd.ProcessState, waitErr)
	res.ExitCode = exit.Code
	b, _ := json.Marshal(exit) //nolint:errchkjson // plain struct: cannot fail
	p.mu.Lock()
	p.queue = append(p.queue, spoolRecord{at: in.now(), data: b, diagnostic: true})
	p.closed = true
	res.Agent, res.Client, res.Stderr = p.counts[1], p.counts[2], p.counts[0]
	p.mu.Unlock()
	p.signal()
	<-spooled
	spool.CloseWrite()

	drain := time.AfterFunc(opts.DrainTimeout, stopPublishing)
	publishing.Wait()
	drain.Stop()
	res.Published = published
	res.Dropped = spool.Dropped()
	if res.Dropped > 0 {
		in.Log.Warn("frames dropped: the buffer was full", "dropped", res.Dropped, "buffer_max", opts.BufferMax)
	}
	var spoolErr error
	if res.Left = spool.Left(); res.Left > 0 {
		res.LeftIn = spool.Dir()
		spoolErr = spool.Leave()
		in.Log.Warn("NATS did not store every frame in time: they are kept on disk, and published by the next "+
			"`agentwire ingest proxy` with the same --buffer-dir, or at once by `agentwire ingest flush`",
			"frames", res.Left, "dir", res.LeftIn, "buffer_dir", opts.BufferDir, "after", opts.DrainTimeout)
	} else {
		spoolErr = spool.Remove()
	}
	in.Log.Info("agent exited", "code", exit.Code, "signal", exit.Signal, "agent", res.Agent, "client", res.Client,
		"stderr", res.Stderr, "published", res.Published, "dropped", res.Dropped, "left", res.Left)
	if pumpErr != nil && !errors.Is(pumpErr, errPumpStopped) {
		return res, errors.Join(pumpErr, spoolErr)
	}
	if spoolErr != nil {
		return res, fmt.Errorf("proxy: %w", spoolErr)
	}
	return res, nil
}

// lastOrdinalWait bounds how long a proxy launch waits to learn where a
// named session's frames end in RAW.
const lastOrdinalWait = 2 * time.Second

// lastOrdinal is the last ordinal RAW holds for a session named by the
// caller, which may hold frames of an earlier run: numbered from 1 again,
// this run's frames would be taken for those and dropped. The agent waits
// for it at most lastOrdinalWait, and not at all when NATS is not
// connected at launch: then the frames are numbered from 1, with a
// warning.
func (in *Ingester) lastOrdinal(ctx context.Context, session string) uint64 {
	err := errNotConnected
	var last uint64
	if in.Pub.Connected() {
		lctx, cancel := context.WithTimeout(ctx, lastOrdinalWait)
		defer cancel()
		last, err = in.Pub.LastOrdinal(lctx, session)
	}
	if err != nil {
		in.Log.Warn("cannot tell where this session's frames end in RAW; numbering from 1, so frames an earlier run "+
			"of the session left there hide as many of this run's", "session", session, "err", err)
	}
	return last
}

var errNotConnected = errors.New("NATS is not connected")

// forward copies r to w byte for byte and queues each complete line read
// as a frame of direction dir ("" for stderr, queued as stderr
// diagnostics), just before it is written.
func (p *proxy) forward(r io.Reader, w io.Writer, dir adapter.Direction) {
	buf := make([]byte, 64<<10)
	var partial []byte
	writeOK := true
	for {
		n, err := r.Read(buf)
		if n > 0 {
			// Queued before it is written: whatever the other side answers
			// crosses after it, so ordinals follow cause and effect.
			chunk := buf[:n]
			for {
				i := bytes.IndexByte(chunk, '\n')
				if i < 0 {
					partial = append(partial, chunk...)
					break
				}
				line := chunk[:i]
				if len(partial) > 0 {
					line = append(partial, line...)
					partial = nil
				}
				p.enqueue(dir, line)
				chunk = chunk[i+1:]
			}
			if writeOK {
				if _, werr := w.Write(buf[:n]); werr != nil {
					writeOK = false // the other side is gone; keep reading so the writer is not blocked
				}
			}
		}
		if err != nil {
			if len(partial) > 0 {
				p.enqueue(dir, partial)
			}
			return
		}
	}
}

// enqueue queues line (not retained) unless it is only white space.
func (p *proxy) enqueue(dir adapter.Direction, line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	b := bytes.Clone(line)
	at := p.in.now()
	p.mu.Lock()
	p.counts[directionCodes[dir]]++
	if p.queued+int64(len(b)) > p.opts.BufferMax {
		p.overflowLocked()
		p.mu.Unlock()
		return
	}
	p.queue = append(p.queue, spoolRecord{dir: dir, at: at, data: b})
	p.queued += int64(len(b))
	p.mu.Unlock()
	p.signal()
}

func (p *proxy) overflowLocked() {
	p.spool.mu.Lock()
	p.spool.dropped++
	p.spool.mu.Unlock()
	p.warnOverflowLocked()
}

func (p *proxy) warnOverflowLocked() {
	if !p.overflow {
		p.overflow = true
		p.in.Log.Warn("the proxy's buffer is full: dropping frames (the agent keeps running; the count is logged at exit)",
			"session", p.s.Key, "buffer_max", p.opts.BufferMax)
	}
}

func (p *proxy) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// spoolQueue moves queued frames to the spool until the queue is closed
// and empty.
func (p *proxy) spoolQueue() {
	for {
		p.mu.Lock()
		batch, closed := p.queue, p.closed
		p.queue, p.queued = nil, 0
		p.mu.Unlock()
		for _, r := range batch {
			if r.dir == "" && !r.diagnostic {
				r.data = stderrFrame(r.data)
			}
			if !p.spool.Append(r) {
				p.mu.Lock()
				p.warnOverflowLocked()
				p.mu.Unlock()
			}
		}
		if closed && len(batch) == 0 {
			return
		}
		if len(batch) == 0 {
			<-p.wake
		}
	}
}

var errPumpStopped = errors.New("proxy: publishing stopped")

// pump publishes the spool's records in order, with the ordinals the
// spool gave them, flushing after each batch and freeing what is stored,
// until the spool is read to its end or ctx ends. connected is called
// once it has a Publisher.
func (p *proxy) pump(ctx context.Context, connected func()) (uint64, error) {
	var published uint64
	if p.in.Pub == nil {
		if p.opts.Connect == nil {
			return 0, errors.New("proxy: no publisher and no way to connect")
		}
		backoff := 250 * time.Millisecond
		for {
			pub, err := p.opts.Connect(ctx)
			if err == nil {
				p.in.Pub = pub
				break
			}
			if ctx.Err() != nil {
				return 0, stopped(ctx, err)
			}
			msg := "NATS is not reachable; the agent runs and its frames wait in the buffer"
			if errors.Is(err, bus.ErrServerTooOld) {
				msg = "the NATS server is too old to publish to; the agent runs and its frames wait in the buffer"
			}
			p.in.Log.Warn(msg, "err", err)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
			}
			backoff = min(2*backoff, 5*time.Second)
		}
	}
	connected()
	for {
		recs, pos, err := p.spool.Next(ctx.Done(), 512)
		for _, r := range recs {
			if perr := p.in.Pub.PublishAt(ctx, Frame{
				SessionKey: p.s.Key, Dialect: p.s.Dialect, Provider: p.in.Provider, Direction: r.dir,
				Bytes: r.data, ReceivedAt: r.at,
			}, r.ordinal); perr != nil {
				return published, stopped(ctx, fmt.Errorf("session %s: %w", p.s.Key, perr))
			}
		}
		if len(recs) > 0 {
			if ferr := p.in.Pub.Flush(ctx); ferr != nil {
				return published, stopped(ctx, fmt.Errorf("flush: %w", ferr))
			}
			published += uint64(len(recs))
			if cerr := p.spool.Commit(pos, recs[len(recs)-1].ordinal); cerr != nil {
				// The frames are stored; only a resumer would publish them
				// again, and RAW's duplicate window drops them.
				p.in.Log.Warn("the buffer could not record what is stored", "err", cerr)
			}
		}
		if errors.Is(err, io.EOF) {
			return published, nil
		}
		if err != nil {
			return published, stopped(ctx, err)
		}
	}
}

// resumeLeftovers publishes what earlier runs left in the buffer
// directory, until ctx ends; what is not stored by then stays.
func (p *proxy) resumeLeftovers(ctx context.Context) uint64 {
	sum, err := ResumeSpools(ctx, p.in.Pub.layout, p.opts.BufferDir, p.in.Log)
	if err != nil && ctx.Err() == nil {
		p.in.Log.Warn("publishing what earlier runs left in the buffer failed; the next run tries again", "dir", p.opts.BufferDir, "err", err)
	}
	if sum.Frames > 0 || sum.Spools > 0 {
		p.in.Log.Info("published what earlier runs left in the buffer", "dir", p.opts.BufferDir, "spools", sum.Spools, "frames", sum.Frames)
	}
	return sum.Frames
}

func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return errors.Join(errPumpStopped, err)
	}
	return err
}
