package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/ingest"
	"github.com/agentwire/agentwire/internal/natstest"
)

// follower runs Follow until stop is called.
type follower struct {
	cancel context.CancelFunc
	done   chan error
}

func startFollower(t *testing.T, f *fixture, paths ...string) *follower {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	fl := &follower{cancel: cancel, done: make(chan error, 1)}
	go func() {
		fl.done <- f.in.Follow(ctx, ingest.FollowOptions{Paths: paths, Dialect: "codex-exec", Poll: 10 * time.Millisecond})
	}()
	t.Cleanup(cancel)
	return fl
}

func (fl *follower) stop(t *testing.T) {
	t.Helper()
	fl.cancel()
	select {
	case err := <-fl.done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not return after its context ended")
	}
}

func frameLines(name string, from, to int) string {
	s := ""
	for i := from; i <= to; i++ {
		s += fmt.Sprintf(`{"type":"item","file":%q,"n":%d}`+"\n", name, i)
	}
	return s
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	w, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = w.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, w.Close())
}

// waitRaw waits until RAW holds n messages.
func (f *fixture) waitRaw(t *testing.T, n uint64) {
	t.Helper()
	stream, err := f.js.Stream(t.Context(), bus.RawStream)
	require.NoError(t, err)
	var last uint64
	require.Eventually(t, func() bool {
		info, err := stream.Info(t.Context())
		require.NoError(t, err)
		last = info.State.Msgs
		return last >= n
	}, 10*time.Second, 5*time.Millisecond, "RAW holds %d of %d", last, n)
	time.Sleep(50 * time.Millisecond) // a few more polls: nothing more may come
	info, err := stream.Info(t.Context())
	require.NoError(t, err)
	require.Equal(t, n, info.State.Msgs, "RAW holds more frames than published lines")
}

func checkFollowed(t *testing.T, f *fixture, want map[string]string) {
	t.Helper()
	got := bySession(f.raw(t))
	require.Len(t, got, len(want))
	for key, body := range want {
		msgs := got[key]
		s := ""
		for i, m := range msgs {
			require.Equal(t, strconv.Itoa(i+1), m.header.Get(bus.HeaderOrdinal), key)
			require.Equal(t, bus.RawMsgID(tenant, key, uint64(i+1)), m.header.Get(bus.HeaderMsgID))
			s += string(m.data) + "\n"
		}
		require.Equal(t, body, s, key)
	}
}

func TestFollow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "sub", "b.jsonl")
	appendFile(t, a, frameLines("a", 1, 2)+`{"type":"item","partial":`)

	mtime := func(path string) time.Time {
		info, err := os.Stat(path)
		require.NoError(t, err)
		return info.ModTime()
	}
	firstA := mtime(a)
	fl := startFollower(t, f, dir)
	f.waitRaw(t, 2) // not the partial line
	appendFile(t, a, "true}\n"+frameLines("a", 3, 3))
	require.NoError(t, os.MkdirAll(filepath.Dir(b), 0o750))
	appendFile(t, b, frameLines("b", 1, 3))
	f.waitRaw(t, 7)

	// Kill and restart: lines written meanwhile come once, after the rest.
	fl.stop(t)
	appendFile(t, a, "\n   \n"+frameLines("a", 4, 5))
	appendFile(t, b, frameLines("b", 4, 4))
	secondA, secondB := mtime(a), mtime(b)
	fl = startFollower(t, f, dir)
	f.waitRaw(t, 10)

	// Truncate a: generation 2 from offset 0.
	require.NoError(t, os.WriteFile(a, []byte(frameLines("a2", 1, 1)), 0o600))
	f.waitRaw(t, 11)
	// Rotate b: moved away, a new file in its place (longer than the old).
	require.NoError(t, os.Rename(b, b+".1"))
	require.NoError(t, os.WriteFile(b+".tmp", []byte(frameLines("b2", 1, 8)), 0o600))
	require.NoError(t, os.Rename(b+".tmp", b))
	f.waitRaw(t, 19)
	fl.stop(t)

	// A restart with nothing new publishes nothing.
	fl = startFollower(t, f, dir)
	appendFile(t, b, frameLines("b2", 9, 9))
	f.waitRaw(t, 20)
	fl.stop(t)

	keyA, keyB := ingest.FileSessionKey(a), ingest.FileSessionKey(b)
	checkFollowed(t, f, map[string]string{
		keyA:        frameLines("a", 1, 2) + `{"type":"item","partial":true}` + "\n" + frameLines("a", 3, 5),
		keyB:        frameLines("b", 1, 4),
		keyA + "#2": frameLines("a2", 1, 1),
		keyB + "#2": frameLines("b2", 1, 9),
	})
	// Backlog: the lines each start found written whole (a's first two;
	// a's and b's lines written while it was stopped), not those written
	// while it followed (the partial line completed then included). b2's
	// last line may be written before the last start's first look or
	// after: left out.
	origins := originsOf(t, f.raw(t))
	// Backlog is written by the file's modification time when the start
	// that found it looked.
	backlogBy := func(at time.Time) frameOrigin { return frameOrigin{backlog: true, writtenBy: at.UTC()} }
	origins[keyB+"#2"] = origins[keyB+"#2"][:8]
	require.Equal(t, map[string][]frameOrigin{
		keyA:        {backlogBy(firstA), backlogBy(firstA), live, live, backlogBy(secondA), backlogBy(secondA)},
		keyB:        {live, live, live, backlogBy(secondB)},
		keyA + "#2": {live},
		keyB + "#2": {live, live, live, live, live, live, live, live},
	}, origins)
}

// originsOf is what the headers of each session's messages say of their
// origin, in order, times in UTC.
func originsOf(t *testing.T, msgs []rawMsg) map[string][]frameOrigin {
	t.Helper()
	out := map[string][]frameOrigin{}
	for key, msgs := range bySession(msgs) {
		for _, m := range msgs {
			o := frameOrigin{backlog: m.header.Get(bus.HeaderBacklog) == "true"}
			if v := m.header.Get(bus.HeaderWrittenBy); v != "" {
				by, err := time.Parse(time.RFC3339Nano, v)
				require.NoError(t, err)
				o.writtenBy = by.UTC()
			}
			out[key] = append(out[key], o)
		}
	}
	return out
}

// TestFollowRotatedWhileStopped: lines a file got while agentwire was
// stopped are backlog, written by the file's time then, also when the
// file was rotated away meanwhile, or was a rotated file still being read.
func TestFollowRotatedWhileStopped(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := t.TempDir()
	c, d := filepath.Join(dir, "c.jsonl"), filepath.Join(dir, "d.jsonl")
	appendFile(t, c, frameLines("c", 1, 1))
	appendFile(t, d, frameLines("d", 1, 1))
	fl := startFollower(t, f, dir)
	f.waitRaw(t, 2)
	// d is rotated while followed; its rotated file is still read (for
	// a minute after it last grew) when agentwire stops.
	require.NoError(t, os.Rename(d, d+".1"))
	appendFile(t, d, frameLines("d2", 1, 1))
	f.waitRaw(t, 3)
	appendFile(t, c, frameLines("c", 2, 2))
	f.waitRaw(t, 4)
	fl.stop(t)

	// Meanwhile: c gets a line and is rotated, a new c gets one; the
	// rotated d gets a line.
	appendFile(t, c, frameLines("c", 3, 3))
	require.NoError(t, os.Rename(c, c+".1"))
	appendFile(t, c, frameLines("c2", 1, 1))
	appendFile(t, d+".1", frameLines("d", 2, 2))
	mtime := func(path string) time.Time {
		info, err := os.Stat(path)
		require.NoError(t, err)
		return info.ModTime().UTC()
	}
	rotatedC, newC, rotatedD := mtime(c+".1"), mtime(c), mtime(d+".1")
	fl = startFollower(t, f, dir)
	f.waitRaw(t, 7)
	fl.stop(t)

	keyC, keyD := ingest.FileSessionKey(c), ingest.FileSessionKey(d)
	checkFollowed(t, f, map[string]string{
		keyC:        frameLines("c", 1, 3),
		keyC + "#2": frameLines("c2", 1, 1),
		keyD:        frameLines("d", 1, 2),
		keyD + "#2": frameLines("d2", 1, 1),
	})
	origins := originsOf(t, f.raw(t))
	first := origins[keyC][0]
	require.True(t, first.backlog, "there when following began")
	require.Equal(t, map[string][]frameOrigin{
		keyC:        {first, live, {backlog: true, writtenBy: rotatedC}},
		keyC + "#2": {{backlog: true, writtenBy: newC}},
		keyD:        {origins[keyD][0], {backlog: true, writtenBy: rotatedD}},
		keyD + "#2": {live},
	}, origins)
}

func TestFollowFileThatAppearsLater(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	path := filepath.Join(t.TempDir(), "later.jsonl")
	fl := startFollower(t, f, path)
	time.Sleep(30 * time.Millisecond)
	appendFile(t, path, frameLines("x", 1, 2))
	f.waitRaw(t, 2)
	fl.stop(t)
	checkFollowed(t, f, map[string]string{ingest.FileSessionKey(path): frameLines("x", 1, 2)})
}

// TestFollowRotation renames a followed file away and creates a new one in
// its place, while its writer goes on appending to the renamed file: the
// renamed file is read to its end under its session key, the new one is
// the next generation, and every line is published once, in order.
func TestFollowRotation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	appendFile(t, path, frameLines("a", 1, 3))
	fl := startFollower(t, f, dir)
	f.waitRaw(t, 3)

	// The writer still holds the renamed file; the path names nothing for
	// a few polls.
	w, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	defer func() { _ = w.Close() }()
	require.NoError(t, os.Rename(path, path+".1"))
	_, err = w.WriteString(frameLines("a", 4, 5))
	require.NoError(t, err)
	f.waitRaw(t, 5)

	// The new file appears; the writer writes a last line to the old one
	// before it reopens the path.
	appendFile(t, path, frameLines("b", 1, 2))
	_, err = w.WriteString(frameLines("a", 6, 6) + `{"type":"item","partial":`)
	require.NoError(t, err)
	f.waitRaw(t, 8)
	_, err = w.WriteString("true}\n")
	require.NoError(t, err)
	require.NoError(t, w.Close())
	appendFile(t, path, frameLines("b", 3, 3))
	f.waitRaw(t, 10)

	// Rotated again: app.jsonl.1 → .2 (still read to its end if it
	// grew), app.jsonl → .1, and a third file.
	require.NoError(t, os.Rename(path+".1", path+".2"))
	require.NoError(t, os.Rename(path, path+".1"))
	appendFile(t, path+".1", frameLines("b", 4, 4))
	appendFile(t, path, frameLines("c", 1, 1))
	f.waitRaw(t, 12)
	fl.stop(t)

	key := ingest.FileSessionKey(path)
	checkFollowed(t, f, map[string]string{
		key:        frameLines("a", 1, 6) + `{"type":"item","partial":true}` + "\n",
		key + "#2": frameLines("b", 1, 4),
		key + "#3": frameLines("c", 1, 1),
	})
}

// TestFollowRotationWhileStopped rotates a followed file while the
// follower is not running: started again, it finds the renamed file by
// its inode and reads the rest of it, then the new file, and a further
// restart publishes nothing again.
func TestFollowRotationWhileStopped(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	appendFile(t, path, frameLines("a", 1, 3))
	fl := startFollower(t, f, path)
	f.waitRaw(t, 3)
	fl.stop(t)

	require.NoError(t, os.Rename(path, filepath.Join(dir, "app.jsonl.1")))
	appendFile(t, filepath.Join(dir, "app.jsonl.1"), frameLines("a", 4, 5))
	appendFile(t, path, frameLines("b", 1, 2))
	fl = startFollower(t, f, path)
	f.waitRaw(t, 7)
	appendFile(t, filepath.Join(dir, "app.jsonl.1"), frameLines("a", 6, 6))
	appendFile(t, path, frameLines("b", 3, 3))
	f.waitRaw(t, 9)
	fl.stop(t)

	// Killed while the rotated file is still being read: the bucket says
	// where it went, and nothing is read twice.
	appendFile(t, filepath.Join(dir, "app.jsonl.1"), frameLines("a", 7, 7))
	fl = startFollower(t, f, path)
	f.waitRaw(t, 10)
	fl.stop(t)

	key := ingest.FileSessionKey(path)
	checkFollowed(t, f, map[string]string{
		key:        frameLines("a", 1, 7),
		key + "#2": frameLines("b", 1, 3),
	})
	require.Contains(t, f.logs.String(), "reading it to its end")
}

// TestFollowOffsetsOfAnEarlierVersion resumes from an offsets entry
// without the file's identity, as earlier versions wrote them: it goes on
// where the entry says, and follows a rotation once it has seen the file.
func TestFollowOffsetsOfAnEarlierVersion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	appendFile(t, path, frameLines("a", 1, 2))
	fl := startFollower(t, f, path)
	f.waitRaw(t, 2)
	fl.stop(t)

	kv, err := f.js.KeyValue(t.Context(), ingest.OffsetsBucket)
	require.NoError(t, err)
	keys, err := kv.ListKeys(t.Context())
	require.NoError(t, err)
	var names []string
	for k := range keys.Keys() {
		names = append(names, k)
	}
	require.Len(t, names, 1)
	e, err := kv.Get(t.Context(), names[0])
	require.NoError(t, err)
	var entry map[string]any
	require.NoError(t, json.Unmarshal(e.Value(), &entry))
	require.Contains(t, entry, "ino", "this version keeps the identity")
	old := map[string]any{}
	for _, k := range []string{"path", "generation", "session", "dialect", "offset", "ordinal", "head"} {
		old[k] = entry[k]
	}
	b, err := json.Marshal(old)
	require.NoError(t, err)
	_, err = kv.Put(t.Context(), names[0], b)
	require.NoError(t, err)

	appendFile(t, path, frameLines("a", 3, 3))
	fl = startFollower(t, f, path)
	f.waitRaw(t, 3)
	w, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, os.Rename(path, path+".1"))
	appendFile(t, path, frameLines("b", 1, 1))
	_, err = w.WriteString(frameLines("a", 4, 4))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	f.waitRaw(t, 5)
	fl.stop(t)

	key := ingest.FileSessionKey(path)
	checkFollowed(t, f, map[string]string{key: frameLines("a", 1, 4), key + "#2": frameLines("b", 1, 1)})
}

// TestFollowRenamedBack renames a followed file away and back: it stays
// one session, read once.
func TestFollowRenamedBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	appendFile(t, path, frameLines("a", 1, 2))
	fl := startFollower(t, f, path)
	f.waitRaw(t, 2)
	require.NoError(t, os.Rename(path, path+".tmp"))
	appendFile(t, path+".tmp", frameLines("a", 3, 3))
	f.waitRaw(t, 3)
	require.NoError(t, os.Rename(path+".tmp", path))
	time.Sleep(50 * time.Millisecond) // a few polls see it back
	appendFile(t, path, frameLines("a", 4, 4))
	f.waitRaw(t, 4)
	fl.stop(t)
	checkFollowed(t, f, map[string]string{ingest.FileSessionKey(path): frameLines("a", 1, 4)})
}

// TestFollowAcrossOutage: a file rotated away while NATS is away is
// noted once it is back (the follower saves where it is at once, and
// waits the outage out), and following goes on.
func TestFollowAcrossOutage(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	r := natstest.NewRelay(t, srv.Addr().String())
	f := connectFixtureAt(t, srv, r.URL())
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	appendFile(t, a, frameLines("a", 1, 2))
	fl := startFollower(t, f, dir)
	f.waitRaw(t, 2)

	r.GoAway(t, f.nc)
	require.NoError(t, os.Rename(a, a+".1"))
	time.Sleep(300 * time.Millisecond) // polls every 10 ms
	select {
	case err := <-fl.done:
		t.Fatalf("the follower stopped while NATS was away: %v", err)
	default:
	}
	r.ComeBack(t, f.nc)
	appendFile(t, a, frameLines("a2", 1, 2))
	f.waitRaw(t, 4)
	fl.stop(t)
	checkFollowed(t, f, map[string]string{
		ingest.FileSessionKey(a):        frameLines("a", 1, 2),
		ingest.FileSessionKey(a) + "#2": frameLines("a2", 1, 2),
	})
}
