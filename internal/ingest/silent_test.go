package ingest_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/ingest"
	"github.com/agentwire/agentwire/internal/natstest"
)

// liveSource is a live input of one session "silent": its first line is
// written when it starts, next writes its second, end ends it; run ingests
// it until then, and want is what RAW then holds.
type liveSource struct {
	run  func(f *fixture) error
	next func()
	end  func()
	want []string
}

// TestHeldFramesStoredWhileSilent: a live source's line is sent into a
// connection the server no longer reads, NATS comes back, and the source
// stays silent. The lost line is stored within seconds, not when the
// source next writes or ends (it was kept until the end, minutes or hours
// on: past the normalizer's wait for a missing frame).
func TestHeldFramesStoredWhileSilent(t *testing.T) {
	t.Parallel()
	sources := map[string]func(t *testing.T) liveSource{
		"exec": func(t *testing.T) liveSource {
			t.Helper()
			dir := t.TempDir()
			next, done := filepath.Join(dir, "next"), filepath.Join(dir, "done")
			script := `echo '{"n":1}'; until [ -e '` + next + `' ]; do sleep 0.02; done; echo '{"n":2}'; until [ -e '` + done + `' ]; do sleep 0.02; done`
			touch := func(path string) func() {
				return func() { require.NoError(t, os.WriteFile(path, nil, 0o600)) }
			}
			return liveSource{
				run: func(f *fixture) error {
					_, err := f.in.Exec(t.Context(), ingest.ExecOptions{Args: []string{"sh", "-c", script}, Session: ingest.Session{Key: "silent", Dialect: "codex-exec"}})
					return err
				},
				next: touch(next), end: touch(done),
				want: []string{`1 {"n":1}`, `2 {"n":2}`, `3 {"agentwire":"exit","code":0}`},
			}
		},
		"stdin": func(t *testing.T) liveSource {
			t.Helper()
			r, w := io.Pipe()
			write := func(line string) {
				_, err := w.Write([]byte(line + "\n"))
				require.NoError(t, err)
			}
			return liveSource{
				run: func(f *fixture) error {
					go write(`{"n":1}`)
					_, _, _, err := f.in.Stream(t.Context(), r, ingest.Session{Key: "silent", Dialect: "codex-exec"})
					return err
				},
				next: func() { write(`{"n":2}`) },
				end:  func() { require.NoError(t, w.Close()) },
				want: []string{`1 {"n":1}`, `2 {"n":2}`},
			}
		},
	}
	for name, source := range sources {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := source(t)
			srv := natstest.Server(t)
			r := natstest.NewRelay(t, srv.Addr().String())
			f := connectFixtureAt(t, srv, r.URL())
			direct := connectFixture(t, srv) // reads RAW while f's client is cut off
			ran := make(chan error, 1)
			go func() { ran <- src.run(f) }()
			stored := func(n int) func() bool {
				return func() bool { return len(bySession(direct.raw(t))["silent"]) >= n }
			}
			require.Eventually(t, stored(1), 10*time.Second, 10*time.Millisecond)

			r.Lose(true)
			src.next()
			require.Eventually(t, func() bool { frames, _ := f.in.Pub.Stats(); return frames == 2 }, 10*time.Second, time.Millisecond, "the second line is sent")
			r.GoAway(t, f.nc)
			r.Lose(false)
			r.Back()
			require.Eventually(t, stored(2), 10*time.Second, 10*time.Millisecond, "the lost line is stored while the source is silent")

			src.end()
			select {
			case err := <-ran:
				require.NoError(t, err)
			case <-time.After(30 * time.Second):
				t.Fatal("the ingest did not end")
			}
			var got []string
			for _, m := range bySession(direct.raw(t))["silent"] {
				got = append(got, m.header.Get(bus.HeaderOrdinal)+" "+string(m.data))
			}
			require.Equal(t, src.want, got)
		})
	}
}
