package cli

import (
	"bufio"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cenats "github.com/cloudevents/sdk-go/protocol/nats_jetstream/v2"
	cloudevents "github.com/cloudevents/sdk-go/v2"
	ceclient "github.com/cloudevents/sdk-go/v2/client"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/natstest"
	"github.com/agentwire/agentwire/internal/normalize"
	"github.com/agentwire/agentwire/pkg/canonical/wire"
)

// TestPipelineMatchesMap is the product's end to end: `agentwire ingest
// file` of recordings of every dialect into a real JetStream, the
// normalizer, and a subscriber on sdk-go's JetStream binding. It receives
// exactly the events `agentwire map` prints for the same files: same ids,
// same order within each session.
func TestPipelineMatchesMap(t *testing.T) {
	t.Parallel()

	// One recording per set; map and ingest agree on session keys.
	dir := t.TempDir()
	dialects := map[string]string{}
	for set, dialect := range map[string]string{
		"codex-exec": "codex-exec", "codex-app-server": "codex-app-server", "codex-rollout": "codex-rollout",
		"claude-stream-partial": "claude-stream", "claude-control": "claude-stream", "claude-log": "claude-log",
		"gemini-stream": "gemini-stream", "acp-gemini": "acp", "acp-claude-code": "acp",
	} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "recordings", set, "multistep.jsonl"))
		require.NoError(t, err)
		path := filepath.Join(dir, set+".jsonl")
		require.NoError(t, os.WriteFile(path, b, 0o600))
		dialects[path] = dialect
	}

	want := map[string][]string{} // file → event ids, in order
	total := 0
	for path, dialect := range dialects {
		r := run(t, "map", "--dialect", dialect, path)
		require.Equal(t, ExitOK, r.code, r.stderr)
		sc := bufio.NewScanner(strings.NewReader(r.stdout))
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			e, err := wire.UnmarshalStructured(sc.Bytes())
			require.NoError(t, err)
			want[path] = append(want[path], e.EventID)
			total++
		}
	}

	srv := natstest.Server(t)
	url := srv.ClientURL()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	nc, js, err := bus.Connect(ctx, url, "test-normalizer", discard())
	require.NoError(t, err)
	defer nc.Close()
	layout, err := bus.Ensure(ctx, js, bus.Config{})
	require.NoError(t, err)
	n, err := normalize.New(ctx, layout, normalize.Config{}, discard())
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Go(func() { _ = n.Run(ctx) })
	defer func() {
		cancel()
		wg.Wait()
	}()

	for path, dialect := range dialects {
		r := run(t, "ingest", "--nats-url", url, "file", "--dialect", dialect, path)
		require.Equal(t, ExitOK, r.code, r.stderr)
	}

	sub := natstest.Conn(t, srv)
	consumer, err := cenats.NewConsumerFromConn(sub, bus.RuntimeStream, "runtime.>", nil, []nats.SubOpt{nats.DeliverAll()})
	require.NoError(t, err)
	// One poller and a blocking callback: by default sdk-go hands events to
	// the callback from several goroutines, which loses the stream's order.
	client, err := cloudevents.NewClient(consumer, ceclient.WithPollGoroutines(1), ceclient.WithBlockingCallback())
	require.NoError(t, err)
	rctx, rcancel := context.WithTimeout(ctx, 60*time.Second)
	defer rcancel()
	var (
		mu   sync.Mutex
		got  []string // event ids in stream order
		seen = 0
		done = make(chan struct{})
	)
	go func() {
		_ = client.StartReceiver(rctx, func(ev event.Event) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, ev.ID())
			seen++
			if seen == total {
				close(done)
			}
		})
	}()
	select {
	case <-done:
	case <-rctx.Done():
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("received %d of %d events", seen, total)
	}
	rcancel()
	mu.Lock()
	defer mu.Unlock()
	// Sessions of different files may share a provider session (a Claude
	// log and the stream it was written from): compare each file's events,
	// in the order the stream holds them.
	require.Len(t, got, total)
	for path, ids := range want {
		mine := map[string]bool{}
		for _, id := range ids {
			mine[id] = true
		}
		var inStream []string
		for _, id := range got {
			if mine[id] {
				inStream = append(inStream, id)
			}
		}
		if len(ids) == len(inStream) {
			for i := range ids {
				if ids[i] != inStream[i] {
					t.Logf("%s: first difference at %d of %d", filepath.Base(path), i, len(ids))
					break
				}
			}
		}
		require.Equal(t, ids, inStream, "events of %s, in order", filepath.Base(path))
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
