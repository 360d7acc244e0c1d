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

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/pkg/adapters"
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

// DefaultRotatedGrace is how long a rotated-away file is still read after
// it last grew.
const DefaultRotatedGrace = time.Minute

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
	// RotatedGrace is how long a file rotated away from a followed path
	// is still read after it last grew (DefaultRotatedGrace when 0): its
	// writer may hold it open for a while before it reopens the path.
	RotatedGrace time.Duration
}

// fileCursor is how far one generation of a followed path was read.
type fileCursor struct {
	Generation int    `json:"generation"`
	Session    string `json:"session"`
	Dialect    string `json:"dialect"`
	// Offset is where the next unread line starts.
	Offset int64 `json:"offset"`
	// Ordinal is the ordinal of the last frame published.
	Ordinal uint64 `json:"ordinal"`
	// Head is the hex SHA-256 of the file's first min(Offset, 1024) bytes.
	Head string `json:"head"`
	// Dev and Ino identify the file apart from its name (both 0 while
	// unknown: entries written before they were kept, files not opened
	// yet, platforms without inodes).
	Dev uint64 `json:"dev,omitempty"`
	Ino uint64 `json:"ino,omitempty"`
}

func (c *fileCursor) id() fileID { return fileID{Dev: c.Dev, Ino: c.Ino} }

func (c *fileCursor) setID(id fileID) { c.Dev, c.Ino = id.Dev, id.Ino }

// followState is what the offsets bucket holds for a followed path: the
// file it names now and the files rotated away from it that are still
// read. Entries of older versions, without "dev", "ino" and "rotated",
// read as a current file of unknown identity.
type followState struct {
	Path string `json:"path"`
	fileCursor
	Rotated []*rotatedFile `json:"rotated,omitempty"`

	size    int64
	modTime time.Time
	warned  bool
	// opened says the path was read since the follower started. Of a file
	// there when it started, the backlog of generation backlogGen was
	// written before it is read.
	opened     bool
	backlog    backlogPart
	backlogGen int
}

// backlogPart is the part of a file written before following began or
// resumed: the lines that end at or before to, which had been written by
// at (the file's modification time then). Zero: none.
type backlogPart struct {
	to int64
	at time.Time
}

// backlogOf is the backlog part of a file following finds as info.
func backlogOf(info os.FileInfo) backlogPart {
	return backlogPart{to: info.Size(), at: info.ModTime()}
}

// rotatedFile is an earlier generation of a path, renamed away from it,
// read to its end under its own session key.
type rotatedFile struct {
	fileCursor
	// Name is where it was last found.
	Name string `json:"name"`

	f        *os.File
	size     int64
	modTime  time.Time
	lastGrew time.Time
	// backlog is what it held when the follower's first look found it,
	// rotated while agentwire was stopped.
	backlog backlogPart
}

// fileID is a file's identity apart from its name: device and inode.
type fileID struct{ Dev, Ino uint64 }

func (id fileID) known() bool { return id.Ino != 0 }

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
// Files are told apart by device and inode where the platform has them.
// When a followed path names another file than before and the one read
// so far is found, under another name, in the same directory (log
// rotation: app.jsonl renamed app.jsonl.1, a new app.jsonl created), the
// rotated file is read to its end under its session key, including lines
// its writer appends after the rename, until it has not grown for
// RotatedGrace; the new file is a new generation of the path: the session
// "<key>#2" (then #3, …), read from offset 0 with ordinals from 1. A file
// that shrinks, or whose first bytes change, is a new generation too (its
// old content is gone). The first generation's key is the file's usual
// session key, so following a file and ingesting it agree. A rotated file
// whose new name the directory walk also matches (app.1.jsonl) is
// followed under that name as well, as a session of its own.
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
	if opts.RotatedGrace <= 0 {
		opts.RotatedGrace = DefaultRotatedGrace
	}
	kv, err := in.Pub.layout.JS.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      opts.Bucket,
		Description: "agentwire ingest file --follow: how far each file was read",
	})
	if err != nil {
		return fmt.Errorf("open the %s bucket: %w", opts.Bucket, err)
	}
	fw := &follower{in: in, kv: kv, opts: opts, files: map[string]*followState{}}
	defer fw.close()
	tick := time.NewTicker(opts.Poll)
	defer tick.Stop()
	for {
		if err := fw.poll(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		fw.polled = true
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
	// polled says the first poll is done: what a file found after that
	// holds was written while the follower ran.
	polled bool
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
	seen := make(map[string]bool, len(paths))
	for _, path := range paths {
		seen[path] = true
		if err := fw.follow(ctx, path); err != nil {
			return err
		}
	}
	// A path the walk no longer finds may have been renamed away: the file
	// is read to its end under its new name.
	var gone []string
	for path, st := range fw.files {
		if !seen[path] && (len(st.Rotated) > 0 || st.id().known()) {
			gone = append(gone, path)
		}
	}
	slices.Sort(gone)
	for _, path := range gone {
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

// close closes the rotated files held open.
func (fw *follower) close() {
	for _, st := range fw.files {
		for _, rf := range st.Rotated {
			if rf.f != nil {
				_ = rf.f.Close() // read-only
				rf.f = nil
			}
		}
	}
}

// state returns the state of a file, loading it from the bucket the first
// time.
func (fw *follower) state(ctx context.Context, path string) (*followState, error) {
	if st, ok := fw.files[path]; ok {
		return st, nil
	}
	base := fw.baseKey(path)
	st := &followState{Path: path, fileCursor: fileCursor{Generation: 1, Session: base}, size: -1}
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

// follow reads what is new in one path: first in the files rotated away
// from it, then in the file it names.
func (fw *follower) follow(ctx context.Context, path string) error {
	st, err := fw.state(ctx, path)
	if err != nil {
		return err
	}
	if err := fw.readRotated(ctx, st); err != nil {
		return err
	}
	f, err := os.Open(path) //nolint:gosec // following the files the user names is the point
	if errors.Is(err, fs.ErrNotExist) {
		// Renamed away (its successor is picked up when it appears) or
		// deleted.
		if !st.id().known() {
			return nil
		}
		if err := fw.rotatedAway(ctx, st, "renamed"); err != nil {
			return err
		}
		if st.id().known() {
			// Not found: deleted. Whatever file appears under the path
			// next is judged by its content.
			st.setID(fileID{})
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("follow %s: %w", path, err)
	}
	defer func() { _ = f.Close() }() // read-only
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("follow %s: %w", path, err)
	}
	id := identify(info)
	switch {
	case !st.id().known() && id.known() && st.Offset == 0 && st.Ordinal == 0:
		// The path's file is new to this generation; it may be a rotated
		// file renamed back.
		for i, rf := range st.Rotated {
			if rf.id() == id {
				fw.in.Log.Info("a rotated file is back under its name; reading on", "path", path, "generation", rf.Generation)
				if rf.f != nil {
					_ = rf.f.Close() // read-only
				}
				st.fileCursor = rf.fileCursor
				st.Rotated = slices.Delete(st.Rotated, i, i+1)
				st.size = -1
				break
			}
		}
	case st.id().known() && id.known() && id != st.id():
		if err := fw.rotatedAway(ctx, st, "rotated"); err != nil {
			return err
		}
	}
	if info.Size() == st.size && info.ModTime().Equal(st.modTime) {
		return nil
	}
	if reset, why, err := fw.replaced(f, info, st); err != nil {
		return err
	} else if reset {
		fw.newGeneration(st, why)
	}
	if id.known() {
		// Kept with the next offset saved: a restart then tells a rotation
		// apart from a file that was rewritten in place.
		st.setID(id)
	}
	if st.Dialect == "" || st.Dialect == AutoDialect {
		if st.Dialect, err = fw.dialect(path, st); err != nil || st.Dialect == "" {
			return err
		}
	}
	if !st.opened && !fw.polled {
		st.backlog, st.backlogGen = backlogOf(info), st.Generation
	}
	st.opened = true
	var part backlogPart
	if st.Generation == st.backlogGen {
		part = st.backlog
	}
	for {
		n, err := fw.read(ctx, f, path, &st.fileCursor, st, part)
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

// newGeneration starts the next generation of st's path, from offset 0.
func (fw *follower) newGeneration(st *followState, why string) {
	fw.in.Log.Info("following a new generation of a file", "path", st.Path, "why", why, "generation", st.Generation+1)
	st.fileCursor = fileCursor{Generation: st.Generation + 1, Session: generationKey(fw.baseKey(st.Path), st.Generation+1)}
	st.size = -1
}

// rotatedAway handles a path that no longer names the file st read: when
// that file is found under another name in the same directory, it moves
// to st.Rotated, to be read to its end, and the path starts a new
// generation. When it is not found (deleted, or replaced by a rename over
// it), st is left as it is: the content checks of replaced decide whether
// the path's file is a new generation or the same lines rewritten.
func (fw *follower) rotatedAway(ctx context.Context, st *followState, why string) error {
	name, f, err := findFile(filepath.Dir(st.Path), st.id(), "")
	if err != nil {
		return fmt.Errorf("follow %s: look for the file it named: %w", st.Path, err)
	}
	if f == nil {
		return nil
	}
	rf := &rotatedFile{fileCursor: st.fileCursor, Name: name, f: f, size: -1, lastGrew: time.Now()}
	if !fw.polled {
		// Rotated while agentwire was stopped: what it holds now was
		// written before.
		if info, err := f.Stat(); err == nil {
			rf.backlog = backlogOf(info)
		}
	}
	st.Rotated = append(st.Rotated, rf)
	fw.in.Log.Info("a followed file was "+why+": reading it to its end, then the path's new file", "path", st.Path, "now", name,
		"session", rf.Session, "offset", rf.Offset)
	fw.newGeneration(st, why)
	// Saved now, so that a restart reads the rotated file under its new
	// name even when the path has no file yet.
	return fw.save(ctx, st)
}

// readRotated reads what is new in the files rotated away from st's path,
// and lets go of those that have not grown for RotatedGrace.
func (fw *follower) readRotated(ctx context.Context, st *followState) error {
	if len(st.Rotated) == 0 {
		return nil
	}
	kept := st.Rotated[:0:0]
	changed := false
	for _, rf := range st.Rotated {
		done, err := fw.readRotatedFile(ctx, st, rf)
		if err != nil {
			return err
		}
		if done {
			if rf.f != nil {
				_ = rf.f.Close() // read-only
				rf.f = nil
			}
			changed = true
			continue
		}
		kept = append(kept, rf)
	}
	if !changed {
		return nil
	}
	st.Rotated = kept
	return fw.save(ctx, st)
}

// readRotatedFile reads what is new in rf; it reports true when rf is done
// with.
func (fw *follower) readRotatedFile(ctx context.Context, st *followState, rf *rotatedFile) (bool, error) {
	found := false
	if rf.f == nil {
		// Loaded from the bucket: find the file again, by identity.
		name, f, err := findFile(filepath.Dir(rf.Name), rf.id(), rf.Name)
		if err != nil {
			return false, fmt.Errorf("follow %s: look for %s: %w", st.Path, rf.Name, err)
		}
		if f == nil {
			fw.in.Log.Warn("a file rotated away from a followed path is gone; lines it got after the last save are not read",
				"path", st.Path, "was", rf.Name, "session", rf.Session, "offset", rf.Offset)
			return true, nil
		}
		rf.Name, rf.f, rf.size, rf.lastGrew = name, f, -1, time.Now()
		fw.in.Log.Info("reading on a file rotated away from a followed path", "path", st.Path, "now", name, "session", rf.Session, "offset", rf.Offset)
		found = true
	}
	info, err := rf.f.Stat()
	if err != nil {
		return false, fmt.Errorf("follow %s: %w", rf.Name, err)
	}
	if found && !fw.polled {
		// Being read when agentwire stopped: what it got since was
		// written before it is read.
		rf.backlog = backlogOf(info)
	}
	if info.Size() == rf.size && info.ModTime().Equal(rf.modTime) {
		if time.Since(rf.lastGrew) < fw.opts.RotatedGrace {
			return false, nil
		}
		if info.Size() > rf.Offset {
			fw.in.Log.Warn("a rotated file ends with a line without its newline; it is not published",
				"file", rf.Name, "session", rf.Session, "bytes", info.Size()-rf.Offset)
		}
		fw.in.Log.Info("done with a rotated file", "file", rf.Name, "session", rf.Session, "frames", rf.Ordinal)
		return true, nil
	}
	if info.Size() < rf.Offset {
		fw.in.Log.Warn("a rotated file shrank; not reading it further", "file", rf.Name, "session", rf.Session)
		return true, nil
	}
	if rf.Dialect == "" || rf.Dialect == AutoDialect {
		d, ok, err := fw.sniffOpen(rf.f, info.Size())
		if err != nil {
			return false, fmt.Errorf("follow %s: %w", rf.Name, err)
		}
		if !ok {
			fw.in.Log.Warn("not reading a rotated file whose dialect cannot be told", "file", rf.Name)
			return true, nil
		}
		rf.Dialect = d
	}
	for {
		n, err := fw.read(ctx, rf.f, rf.Name, &rf.fileCursor, st, rf.backlog)
		if err != nil {
			return false, err
		}
		if n == 0 {
			break
		}
	}
	rf.size, rf.modTime, rf.lastGrew = info.Size(), info.ModTime(), time.Now()
	return false, nil
}

// sniffOpen is the dialect of an open file: opts.Dialect, or sniffed.
func (fw *follower) sniffOpen(f *os.File, size int64) (string, bool, error) {
	if fw.opts.Dialect != AutoDialect {
		return fw.opts.Dialect, true, nil
	}
	lines, err := firstLines(io.NewSectionReader(f, 0, size), sniffMaxLines, sniffMaxBytes)
	if err != nil {
		return "", false, err
	}
	d, ok := adapters.Sniff(lines)
	return d, ok, nil
}

// findFile looks in dir for the file whose identity is id, trying the name
// hint first, and opens it; it returns a nil file when there is none.
func findFile(dir string, id fileID, hint string) (string, *os.File, error) {
	if !id.known() {
		return "", nil, nil
	}
	open := func(name string) *os.File {
		f, err := os.Open(name) //nolint:gosec // a file rotated away from one the user names
		if err != nil {
			return nil
		}
		// Checked on the open file: the name may have moved on meanwhile.
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() && identify(info) == id {
			return f
		}
		_ = f.Close() // read-only
		return nil
	}
	if hint != "" {
		if f := open(hint); f != nil {
			return hint, f, nil
		}
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil || identify(info) != id {
			continue // gone meanwhile, or another file
		}
		name := filepath.Join(dir, e.Name())
		if f := open(name); f != nil {
			return name, f, nil
		}
	}
	return "", nil, nil
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

// read publishes the complete lines of f (named name) after c.Offset, up
// to followBatch bytes, waits until they are stored and saves st, of which
// c is the current file or a rotated one; the lines in part are backlog.
// It returns how many bytes it consumed.
func (fw *follower) read(ctx context.Context, f *os.File, name string, c *fileCursor, st *followState, part backlogPart) (int64, error) {
	if _, err := f.Seek(c.Offset, io.SeekStart); err != nil {
		return 0, fmt.Errorf("follow %s: %w", name, err)
	}
	br := bufio.NewReaderSize(f, readBufferSize)
	var consumed int64
	ordinal := c.Ordinal
	for consumed < followBatch {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			break // a partial last line waits for its newline
		}
		if err != nil {
			return 0, fmt.Errorf("follow %s: %w", name, err)
		}
		consumed += int64(len(line))
		// Written whole before following began: a line completed later
		// was written (ended) while followed.
		backlog := c.Offset+consumed <= part.to
		line = bytes.TrimSuffix(line, []byte("\n"))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		ordinal++
		fr := Frame{
			SessionKey: c.Session, Dialect: c.Dialect, Provider: fw.in.Provider,
			Bytes: line, ReceivedAt: fw.in.now(), Backlog: backlog,
		}
		if backlog {
			fr.WrittenBy = part.at
		}
		err = fw.in.Pub.PublishAt(ctx, fr, ordinal)
		if err != nil {
			return 0, fmt.Errorf("follow %s: %w", name, err)
		}
	}
	if consumed == 0 {
		return 0, nil
	}
	fctx, cancel := flushContext(ctx)
	defer cancel()
	if err := fw.in.Pub.Flush(fctx); err != nil {
		return 0, fmt.Errorf("follow %s: %w", name, err)
	}
	prev := *c
	c.Offset += consumed
	c.Ordinal = ordinal
	if prev.Offset < fingerprintLen || prev.Head == "" {
		head, err := fingerprint(f, c.Offset)
		if err != nil {
			*c = prev
			return 0, fmt.Errorf("follow %s: %w", name, err)
		}
		c.Head = head
	}
	if err := fw.save(ctx, st); err != nil {
		*c = prev
		return 0, err
	}
	return consumed, nil
}

// save writes st to the bucket (a fresh context when ctx has just ended:
// the frames are stored, so their offset must be too).
func (fw *follower) save(ctx context.Context, st *followState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode the offset of %s: %w", st.Path, err)
	}
	sctx, cancel := flushContext(ctx)
	defer cancel()
	// A NATS restart is waited out (bus.WaitOut), or the follower would stop.
	_, err = bus.WaitOut(sctx, nil, 0, func() (uint64, error) {
		return fw.kv.Put(sctx, followKey(fw.in.Pub.tenant, fw.baseKey(st.Path)), b)
	})
	if err != nil {
		return fmt.Errorf("save the offset of %s: %w", st.Path, err)
	}
	return nil
}
