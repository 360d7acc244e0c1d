package ingest_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/ingest"
	"github.com/agentwire/agentwire/internal/natstest"
)

func TestFilesBadInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := t.TempDir()

	huge := bytes.Repeat([]byte(`{"big":"`), 1)
	huge = append(huge, bytes.Repeat([]byte("x"), 5<<20)...)
	huge = append(huge, `"}`...)
	var bad bytes.Buffer
	bad.WriteString(`{"type":"turn.started"}` + "\n") // sniffable
	bad.WriteString("not json at all\n")
	bad.WriteString("\n\n   \n\t\n")
	bad.Write(huge)
	bad.WriteString("\n")
	bad.WriteString("{\"text\":\"\xff\xfe invalid utf-8\"}\n")
	bad.WriteString(`{"truncated":` + "\r\n")
	bad.WriteString(`{"no":"newline at the end"}`)
	badPath := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(badPath, bad.Bytes(), 0o600))

	var many bytes.Buffer
	for i := range 100_000 {
		if i%10 == 9 {
			fmt.Fprintf(&many, "{\"broken\":%d\n", i)
		} else {
			fmt.Fprintf(&many, "{\"type\":\"item.completed\",\"n\":%d}\n", i)
		}
	}
	manyPath := filepath.Join(dir, "many.jsonl")
	require.NoError(t, os.WriteFile(manyPath, many.Bytes(), 0o600))

	inputs, err := ingest.Discover([]string{dir}, ingest.AutoDialect)
	require.NoError(t, err)
	sum, err := f.in.Files(t.Context(), inputs, ingest.FileOptions{})
	require.NoError(t, err)
	require.Equal(t, 2, sum.Files)
	require.Equal(t, uint64(6+100_000), sum.Frames)

	sessions := bySession(f.raw(t))
	badFrames := frames(t, badPath)
	require.Len(t, badFrames, 6)
	require.Equal(t, []byte(`{"truncated":`+"\r"), badFrames[4], "only the newline is taken off")
	f.checkSession(t, sessions[ingest.FileSessionKey(badPath)], ingest.FileSessionKey(badPath), "codex-exec", badFrames, fileOrigin(t, badPath))
	bigMsg := sessions[ingest.FileSessionKey(badPath)][2]
	require.Equal(t, bus.RawMsgID(tenant, ingest.FileSessionKey(badPath), 3), bigMsg.header.Get(bus.HeaderObject), "the 5 MB frame is in the object store")
	require.True(t, bytes.Equal(huge, f.body(t, bigMsg)))

	manyMsgs := sessions[ingest.FileSessionKey(manyPath)]
	require.Len(t, manyMsgs, 100_000)
	lines := bytes.Split(bytes.TrimSuffix(many.Bytes(), []byte("\n")), []byte("\n"))
	var wantOrd, gotOrd []string
	var got [][]byte
	for i, m := range manyMsgs {
		wantOrd = append(wantOrd, strconv.Itoa(i+1))
		gotOrd = append(gotOrd, m.header.Get(bus.HeaderOrdinal))
		got = append(got, m.data)
	}
	require.Equal(t, wantOrd, gotOrd)
	require.Equal(t, lines, got)
}

// TestFilesNATSRestart restarts the NATS server (same store) in the
// middle of a large ingest: the ingest completes and RAW holds every frame
// exactly once. The file is a named pipe the test writes, so the restart
// falls between its halves whatever the machine's speed: with a whole
// file, the ingest could end before the restart, and the test pass having
// tested nothing.
func TestFilesNATSRestart(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	f := connectFixture(t, srv)
	const n = 20_000
	frame := func(i int) []byte {
		return fmt.Appendf(nil, "{\"type\":\"item.updated\",\"n\":%d,\"pad\":\"%0300d\"}", i, i)
	}
	half := func(from, to int) []byte {
		var b bytes.Buffer
		for i := from; i < to; i++ {
			b.Write(frame(i))
			b.WriteByte('\n')
		}
		return b.Bytes()
	}
	path := filepath.Join(t.TempDir(), "growing.jsonl")
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	inputs, err := ingest.Discover([]string{path}, "codex-exec")
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() {
		_, err := f.in.Files(t.Context(), inputs, ingest.FileOptions{})
		done <- err
	}()
	opened := make(chan *os.File, 1)
	go func() {
		w, err := os.OpenFile(path, os.O_WRONLY, 0) // waits for the ingest to open it
		if err == nil {
			opened <- w
		}
	}()
	var w *os.File
	select {
	case w = <-opened:
	case err := <-done:
		t.Fatalf("ingest ended before it read the pipe: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the ingest did not open the pipe")
	}
	_, err = w.Write(half(0, n/2))
	require.NoError(t, err)
	require.Eventually(t, func() bool { frames, _ := f.in.Pub.Stats(); return frames == n/2 }, 20*time.Second, time.Millisecond)
	natstest.Restart(t, srv)
	_, err = w.Write(half(n/2, n))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("ingest did not finish after the NATS restart")
	}
	frames, _ := f.in.Pub.Stats()
	require.Equal(t, uint64(n), frames)

	msgs := f.raw(t)
	require.Len(t, msgs, n)
	seen := make([]bool, n+1)
	inOrder := true
	for i, m := range msgs {
		o, err := strconv.Atoi(m.header.Get(bus.HeaderOrdinal))
		require.NoError(t, err)
		require.True(t, o >= 1 && o <= n, o)
		require.False(t, seen[o], "ordinal %d stored twice", o)
		seen[o] = true
		require.True(t, bytes.Equal(frame(o-1), m.data), "frame %d", o)
		inOrder = inOrder && o == i+1
	}
	t.Logf("RAW holds all %d frames once; in ordinal order: %v", n, inOrder)
}
