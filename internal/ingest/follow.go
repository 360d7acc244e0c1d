package ingest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// OffsetsBucket is the JetStream KV bucket where `ingest file --follow`
// keeps how far it has read each file.
const OffsetsBucket = "INGEST_OFFSETS"

// fingerprintLen is how many leading bytes of a file tell it from the
// file that replaced it.
const fingerprintLen = 1024

// followBatch bounds the bytes read from a file between two saves of its
// offset.
const followBatch = 4 << 20

// FollowOptions tune Follow.
type FollowOptions struct {
	// Paths are the files and directories to follow. A directory is
	// walked for *.jsonl, *.json and *.ndjson files at every poll, so new
	// session files are picked up; a path that does not exist yet is
	// followed once it does.
	Paths []string
	// Dialect of every file, or AutoDialect (sniffed per file).
	Dialect string
	// SessionKey overrides the session key of a single file.
	SessionKey string
	// Poll is how often files are checked (250 ms when 0).
	Poll time.Duration
	// Bucket is the KV bucket of the offsets (OffsetsBucket when "").
	Bucket string
}

// followState is what the offsets bucket holds for a file: enough to
// resume it, and to tell that it was truncated or replaced.
type followState struct {
	Path       string `json:"path"`
	Generation int    `json:"generation"`
	Session    string `json:"session"`
	Dialect    string `json:"dialect"`
	// Offset is where the next unread line starts.
	Offset int64 `json:"offset"`
	// Ordinal is the ordinal of the last frame published.
	Ordinal uint64 `json:"ordinal"`
	// Head is the hex SHA-256 of the file's first min(Offset, 1024) bytes.
	Head string `json:"head"`

	size    int64
	modTime time.Time
	warned  bool
}

// followKey is the KV key of a file of a tenant: the tenant and the hash of
// its session key (keys cannot hold every byte a path may).
func followKey(tenant, baseKey string) string {
	h := sha256.Sum256([]byte(baseKey))
	return tenant + "." + hex.EncodeToString(h[:20])
}

// generationKey is the session key of a generation of a file: the base
// key, then "#2", "#3", … for the files that replaced the first one.
func generationKey(base string, gen int) string {
	if gen <= 1 {
		return base
	}
	return base + "#" + strconv.Itoa(gen)
}

// Follow tails files until ctx ends: it publishes every complete line
// (never a last line still missing its newline), keeps each file's offset
// and last ordinal in the offsets bucket once JetStream has stored its
// frames, and resumes from there when started again, so every line is
// published once, in order. (Should Follow stop between storing frames
// and saving the offset, the lines are published again with the same
// ordinals, and RAW's duplicate window drops them.)
//
// A file that shrinks, or whose first bytes change (it was replaced, as
// log rotation does), starts a new session generation: it is read again
// from offset 0 as the session "<key>#2" (then #3, …), with ordinals from
// 1. The first generation's key is the file's usual session key, so
// following a file and ingesting it agree. Lines a rotated-away file
// got after the last poll are not read.
//
// Follow returns nil when ctx ends, after storing what it read.
func (in *Ingester) Follow(ctx context.Context, opts FollowOptions) error {
	if opts.Poll <= 0 {
		opts.Poll = 250 * time.Millisecond
	}
	if opts.Bucket == "" {
		opts.Bucket = OffsetsBucket
	}
	if opts.Dialect == "" {
		opts.Dialect = AutoDialect
	}
	kv, err := in.Pub.layout.JS.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      opts.Bucket,
		Description: "agentwire ingest file --follow: how far each file was read",
	})
	if err != nil {
		return fmt.Errorf("open the %s bucket: %w", opts.Bucket, err)
	}
	fw := &follower{in: in, kv: kv, opts: opts, files: map[string]*followState{}}
	tick := time.NewTicker(opts.Poll)
	defer tick.Stop()
	for {
		if err := fw.poll(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

type follower struct {
	in    *Ingester
	kv    jetstream.KeyValue
	opts  FollowOptions
	files map[string]*followState
}

// scan lists the files to follow now, in lexical order.
func (fw *follower) scan() ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, p := range fw.opts.Paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		st, err := os.Stat(abs)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			if !seen[abs] {
				seen[abs] = true
				out = append(out, abs)
			}
			continue
		}
		err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // gone while walking
				}
				return err
			}
			if d.IsDir() || !d.Type().IsRegular() || !slices.Contains(frameExtensions, strings.ToLower(filepath.Ext(path))) {
				return nil
			}
			if !seen[path] {
				seen[path] = true
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("walk %s: %w", p, err)
		}
	}
	if fw.opts.SessionKey != "" && len(out) > 1 {
		return nil, fmt.Errorf("a session key names one file; following %d", len(out))
	}
	return out, nil
}

func (fw *follower) poll(ctx context.Context) error {
	paths, err := fw.scan()
	if err != nil {
		return err
	}
	for _, path := range paths {
		if err := fw.follow(ctx, path); err != nil {
			return err
		}
	}
	return nil
}

func (fw *follower) baseKey(path string) string {
	if fw.opts.SessionKey != "" {
		return fw.opts.SessionKey
	}
	return FileSessionKey(path)
}

// state returns the state of a file, loading it from the bucket the first
// time.
func (fw *follower) state(ctx context.Context, path string) (*followState, error) {
	if st, ok := fw.files[path]; ok {
		return st, nil
	}
	base := fw.baseKey(path)
	st := &followState{Path: path, Generation: 1, Session: base, size: -1}
	e, err := fw.kv.Get(ctx, followKey(fw.in.Pub.tenant, base))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
	case err != nil:
		return nil, fmt.Errorf("read the offset of %s: %w", path, err)
	default:
		if err := json.Unmarshal(e.Value(), st); err != nil {
			return nil, fmt.Errorf("the offset of %s in %s: %w", path, fw.opts.Bucket, err)
		}
		st.size = -1
	}
	fw.files[path] = st
	return st, nil
}

// follow reads what is new in one file.
func (fw *follower) follow(ctx context.Context, path string) error {
	st, err := fw.state(ctx, path)
	if err != nil {
		return err
	}
	f, err := os.Open(path) //nolint:gosec // following the files the user names is the point
	if errors.Is(err, fs.ErrNotExist) {
		return nil // rotated away; its successor is picked up when it appears
	}
	if err != nil {
		return fmt.Errorf("follow %s: %w", path, err)
	}
	defer func() { _ = f.Close() }() // read-only
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("follow %s: %w", path, err)
	}
	if info.Size() == st.size && info.ModTime().Equal(st.modTime) {
		return nil
	}
	if reset, why, err := fw.replaced(f, info, st); err != nil {
		return err
	} else if reset {
		fw.in.Log.Info("following a new generation of a file", "path", path, "why", why, "generation", st.Generation+1)
		st.Generation++
		st.Session = generationKey(fw.baseKey(path), st.Generation)
		st.Offset, st.Ordinal, st.Head, st.Dialect = 0, 0, "", ""
	}
	if st.Dialect == "" || st.Dialect == AutoDialect {
		if st.Dialect, err = fw.dialect(path, st); err != nil || st.Dialect == "" {
			return err
		}
	}
	for {
		n, err := fw.read(ctx, f, st)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
	}
	st.size, st.modTime = info.Size(), info.ModTime()
	return nil
}

// replaced says whether the file is no longer the one st describes.
func (fw *follower) replaced(f *os.File, info fs.FileInfo, st *followState) (bool, string, error) {
	if st.Offset == 0 {
		return false, "", nil
	}
	if info.Size() < st.Offset {
		return true, "truncated", nil
	}
	head, err := fingerprint(f, st.Offset)
	if err != nil {
		return false, "", fmt.Errorf("follow %s: %w", st.Path, err)
	}
	if head != st.Head {
		return true, "replaced", nil
	}
	return false, "", nil
}

func fingerprint(f *os.File, offset int64) (string, error) {
	buf := make([]byte, min(offset, fingerprintLen))
	if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	h := sha256.Sum256(buf)
	return hex.EncodeToString(h[:]), nil
}

// dialect is the dialect of a file, "" while it cannot be told yet.
func (fw *follower) dialect(path string, st *followState) (string, error) {
	if fw.opts.Dialect != AutoDialect {
		return fw.opts.Dialect, nil
	}
	d, ok, err := SniffFile(path)
	if err != nil {
		return "", err
	}
	if !ok {
		if !st.warned {
			st.warned = true
			fw.in.Log.Warn("not following a file whose dialect cannot be told yet; pass --dialect", "path", path)
		}
		return "", nil
	}
	fw.in.Log.Info("following a file", "path", path, "dialect", d, "session", st.Session, "offset", st.Offset)
	return d, nil
}

// read publishes the complete lines after st.Offset, up to followBatch
// bytes, waits until they are stored and saves the new offset. It returns
// how many bytes it consumed.
func (fw *follower) read(ctx context.Context, f *os.File, st *followState) (int64, error) {
	if _, err := f.Seek(st.Offset, io.SeekStart); err != nil {
		return 0, fmt.Errorf("follow %s: %w", st.Path, err)
	}
	br := bufio.NewReaderSize(f, readBufferSize)
	var consumed int64
	ordinal := st.Ordinal
	for consumed < followBatch {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			break // a partial last line waits for its newline
		}
		if err != nil {
			return 0, fmt.Errorf("follow %s: %w", st.Path, err)
		}
		consumed += int64(len(line))
		line = bytes.TrimSuffix(line, []byte("\n"))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		ordinal++
		err = fw.in.Pub.PublishAt(ctx, Frame{
			SessionKey: st.Session, Dialect: st.Dialect, Provider: fw.in.Provider,
			Bytes: line, ReceivedAt: fw.in.now(),
		}, ordinal)
		if err != nil {
			return 0, fmt.Errorf("follow %s: %w", st.Path, err)
		}
	}
	if consumed == 0 {
		return 0, nil
	}
	fctx, cancel := flushContext(ctx)
	defer cancel()
	if err := fw.in.Pub.Flush(fctx); err != nil {
		return 0, fmt.Errorf("follow %s: %w", st.Path, err)
	}
	next := *st
	next.Offset += consumed
	next.Ordinal = ordinal
	if st.Offset < fingerprintLen || st.Head == "" {
		head, err := fingerprint(f, next.Offset)
		if err != nil {
			return 0, fmt.Errorf("follow %s: %w", st.Path, err)
		}
		next.Head = head
	}
	if err := fw.save(ctx, &next); err != nil {
		return 0, err
	}
	*st = next
	return consumed, nil
}

// save writes st to the bucket (a fresh context when ctx has just ended:
// the frames are stored, so their offset must be too).
func (fw *follower) save(ctx context.Context, st *followState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	sctx, cancel := flushContext(ctx)
	defer cancel()
	_, err = fw.kv.Put(sctx, followKey(fw.in.Pub.tenant, fw.baseKey(st.Path)), b)
	if err != nil {
		return fmt.Errorf("save the offset of %s: %w", st.Path, err)
	}
	return nil
}
