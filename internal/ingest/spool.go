package ingest

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentwire/agentwire/pkg/adapters/adapter"
)

// spoolRecord is one frame kept in a spool.
type spoolRecord struct {
	dir        adapter.Direction
	at         time.Time
	ordinal    uint64 // assigned by Append
	data       []byte
	diagnostic bool // a frame ingest wrote (model, exit), not a stderr line to wrap (not kept on disk: a stderr-kind record is published as it is)
}

// spoolPos is a position in a spool: a segment and an offset in it.
type spoolPos struct {
	seg uint64
	off int64
}

// recordHeader: direction (1), receive time in Unix nanoseconds (8),
// ordinal (8), length (4).
const recordHeader = 1 + 8 + 8 + 4

var directionCodes = map[adapter.Direction]byte{"": 0, adapter.FromAgent: 1, adapter.FromClient: 2}

func directionOf(code byte) adapter.Direction {
	for d, c := range directionCodes {
		if c == code {
			return d
		}
	}
	return ""
}

// Files of a spool directory.
const (
	spoolLockFile      = "lock"
	spoolMetaFile      = "meta.json"
	spoolCommittedFile = "committed"
	spoolSegmentExt    = ".seg"
	// spoolNewPrefix marks a spool being set up: resumers pass it by.
	spoolNewPrefix = ".new-"
)

// spoolVersion is the version of the on-disk layout in SpoolMeta.
const spoolVersion = 1

// SpoolMeta says whose frames a spool holds, so that they can be
// published by another process than the one that wrote them.
type SpoolMeta struct {
	Version  int       `json:"version"`
	Tenant   string    `json:"tenant"`
	Session  string    `json:"session"`
	Dialect  string    `json:"dialect"`
	Provider string    `json:"provider,omitempty"`
	Started  time.Time `json:"started"`
}

// Spool is a bounded first-in first-out queue of frames on disk, in
// segment files of a directory of its own, each frame with its ordinal
// (assigned by Append, from 1). Append never blocks on the reader: a
// frame that does not fit in max bytes is dropped and counted. Next reads
// records in order; Commit deletes the segments read wholly and records
// the last ordinal stored.
//
// The directory outlives the process when the frames could not all be
// stored (Leave, or a crash): it holds the spool's SpoolMeta, the last
// ordinal stored and the segments, and the process that owns it holds a
// lock on it, so that ResumeSpools publishes only the spools nobody owns.
type Spool struct {
	dir    string
	max    int64
	segMax int64
	unlock func() error

	mu        sync.Mutex
	cur       *os.File // segment being written
	curSeg    uint64
	lengths   map[uint64]int64 // bytes written to each live segment
	size      int64            // bytes in live segments
	seq       uint64           // ordinal of the last record appended
	committed uint64           // ordinal of the last record stored
	commitF   *os.File
	dropped   uint64
	closed    bool
	notify    chan struct{}

	read     spoolPos // next record to read
	readFile *os.File
	readSeg  uint64
}

// createSpool creates a spool of its own in parent holding at most
// maxBytes, locked by this process until Remove or Leave.
func createSpool(parent, name string, meta SpoolMeta, maxBytes int64) (*Spool, error) {
	if maxBytes <= 0 {
		return nil, errors.New("spool: the buffer size must be positive")
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	// Set up under a name resumers pass by, then renamed: a resumer never
	// sees a spool without its lock taken and its meta written.
	tmp, err := os.MkdirTemp(parent, spoolNewPrefix+name+"-")
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	unlock, ok, err := lockFile(filepath.Join(tmp, spoolLockFile))
	if err == nil && !ok {
		err = errors.New("locked by another process")
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("spool %s: %w", tmp, err)
	}
	meta.Version = spoolVersion
	b, err := json.Marshal(meta)
	if err == nil {
		err = os.WriteFile(filepath.Join(tmp, spoolMetaFile), b, 0o600)
	}
	dir := filepath.Join(parent, strings.TrimPrefix(filepath.Base(tmp), spoolNewPrefix))
	if err == nil {
		err = os.Rename(tmp, dir)
	}
	if err != nil {
		_ = unlock()
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("spool %s: %w", dir, err)
	}
	s := &Spool{
		dir: dir, max: maxBytes, segMax: min(8<<20, max(maxBytes/4, 64<<10)), unlock: unlock,
		lengths: map[uint64]int64{}, notify: make(chan struct{}, 1),
	}
	s.read = spoolPos{seg: 1}
	if s.commitF, err = os.OpenFile(filepath.Join(dir, spoolCommittedFile), os.O_CREATE|os.O_RDWR, 0o600); err == nil { //nolint:gosec // a file of our own spool directory
		err = s.rotate()
	}
	if err != nil {
		_ = s.Remove()
		return nil, fmt.Errorf("spool %s: %w", dir, err)
	}
	return s, nil
}

// Dir is the spool's directory.
func (s *Spool) Dir() string { return s.dir }

func segPath(dir string, n uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%016d%s", n, spoolSegmentExt))
}

// rotate starts a new segment; s.mu is held (or s is new).
func (s *Spool) rotate() error {
	if s.cur != nil {
		if err := s.cur.Close(); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
	}
	s.curSeg++
	f, err := os.OpenFile(segPath(s.dir, s.curSeg), os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	s.cur = f
	s.lengths[s.curSeg] = 0
	return nil
}

// continueAfter makes the records appended next take the ordinals after
// last. It is called before the first Append.
func (s *Spool) continueAfter(last uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq = max(s.seq, last)
}

// Append adds a record, numbering it; it reports false when the spool is
// full (or failing) and the record was dropped.
func (s *Spool) Append(r spoolRecord) bool {
	n := int64(recordHeader + len(r.data))
	buf := make([]byte, n)
	buf[0] = directionCodes[r.dir]
	binary.BigEndian.PutUint64(buf[1:9], uint64(r.at.UnixNano()))
	binary.BigEndian.PutUint32(buf[17:21], uint32(len(r.data))) //nolint:gosec // frames are far below 4 GiB
	copy(buf[recordHeader:], r.data)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.size+n > s.max {
		s.dropped++
		return false
	}
	if s.lengths[s.curSeg] > 0 && s.lengths[s.curSeg]+n > s.segMax {
		if err := s.rotate(); err != nil {
			s.dropped++
			return false
		}
	}
	binary.BigEndian.PutUint64(buf[9:17], s.seq+1)
	if _, err := s.cur.Write(buf); err != nil {
		// A short write would leave half a record for the reader to trip
		// on; cut it off.
		_ = s.cur.Truncate(s.lengths[s.curSeg])
		s.dropped++
		return false
	}
	s.seq++
	s.lengths[s.curSeg] += n
	s.size += n
	select {
	case s.notify <- struct{}{}:
	default:
	}
	return true
}

// Dropped counts the records Append dropped.
func (s *Spool) Dropped() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Size is the bytes the spool holds (read but not committed included).
func (s *Spool) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size
}

// Left counts the records appended and not yet committed.
func (s *Spool) Left() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq - s.committed
}

// CloseWrite says no more records will be appended: Next returns io.EOF
// once it has read everything.
func (s *Spool) CloseWrite() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// Next returns up to n records in order, waiting for one when the spool
// is empty, and the position after them (to Commit once they are
// stored). It returns io.EOF after CloseWrite once all are read, and an
// error when done is closed first.
func (s *Spool) Next(done <-chan struct{}, n int) ([]spoolRecord, spoolPos, error) {
	for {
		recs, err := s.readAvailable(n)
		if err != nil || len(recs) > 0 {
			return recs, s.read, err
		}
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			if recs, err := s.readAvailable(n); err != nil || len(recs) > 0 {
				return recs, s.read, err
			}
			return nil, s.read, io.EOF
		}
		select {
		case <-s.notify:
		case <-done:
			return nil, s.read, errors.New("spool: stopped")
		}
	}
}

func (s *Spool) readAvailable(n int) ([]spoolRecord, error) {
	var out []spoolRecord
	for len(out) < n {
		s.mu.Lock()
		written := s.lengths[s.read.seg]
		last := s.read.seg == s.curSeg
		s.mu.Unlock()
		if s.read.off >= written {
			if last {
				return out, nil
			}
			s.read = spoolPos{seg: s.read.seg + 1}
			continue
		}
		if s.readFile == nil || s.readSeg != s.read.seg {
			if s.readFile != nil {
				_ = s.readFile.Close()
			}
			f, err := os.Open(segPath(s.dir, s.read.seg))
			if err != nil {
				return out, fmt.Errorf("spool: %w", err)
			}
			s.readFile, s.readSeg = f, s.read.seg
		}
		r, size, err := readRecord(s.readFile, s.read.off)
		if err != nil {
			return out, err
		}
		out = append(out, r)
		s.read.off += size
	}
	return out, nil
}

// readRecord reads the record at off; io.ErrUnexpectedEOF means the
// segment ends in the middle of it.
func readRecord(f *os.File, off int64) (spoolRecord, int64, error) {
	var h [recordHeader]byte
	if _, err := f.ReadAt(h[:], off); err != nil {
		return spoolRecord{}, 0, fmt.Errorf("spool: read a record header: %w", unexpectedEOF(err))
	}
	data := make([]byte, binary.BigEndian.Uint32(h[17:21]))
	if _, err := f.ReadAt(data, off+recordHeader); err != nil {
		return spoolRecord{}, 0, fmt.Errorf("spool: read a record: %w", unexpectedEOF(err))
	}
	return spoolRecord{
		dir:     directionOf(h[0]),
		at:      time.Unix(0, int64(binary.BigEndian.Uint64(h[1:9]))), //nolint:gosec // written from a time
		ordinal: binary.BigEndian.Uint64(h[9:17]),
		data:    data,
	}, int64(recordHeader + len(data)), nil
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Commit records that the records before pos, up to ordinal, are stored:
// it frees the segments wholly before pos and keeps ordinal on disk, so
// that whoever resumes the spool skips them.
func (s *Spool) Commit(pos spoolPos, ordinal uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var werr error
	if ordinal > s.committed {
		s.committed = ordinal
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], ordinal)
		if _, err := s.commitF.WriteAt(b[:], 0); err != nil {
			werr = fmt.Errorf("spool: record the frames stored: %w", err)
		}
	}
	segs := make([]uint64, 0, len(s.lengths))
	for seg := range s.lengths {
		segs = append(segs, seg)
	}
	slices.Sort(segs)
	for _, seg := range segs {
		if seg >= pos.seg || seg == s.curSeg {
			break
		}
		if s.readFile != nil && s.readSeg == seg {
			_ = s.readFile.Close()
			s.readFile = nil
		}
		_ = os.Remove(segPath(s.dir, seg))
		s.size -= s.lengths[seg]
		delete(s.lengths, seg)
	}
	// The current segment, read and committed to its end, is emptied.
	if pos.seg == s.curSeg && pos.off == s.lengths[s.curSeg] && pos.off > 0 && s.read == pos {
		if err := s.cur.Truncate(0); err == nil {
			s.size -= s.lengths[s.curSeg]
			s.lengths[s.curSeg] = 0
			s.read = spoolPos{seg: s.curSeg}
		}
	}
	return werr
}

// closeFiles closes the spool's files; s.mu is held.
func (s *Spool) closeFiles() error {
	s.closed = true
	if s.readFile != nil {
		_ = s.readFile.Close()
		s.readFile = nil
	}
	var errs []error
	if s.cur != nil {
		errs = append(errs, s.cur.Close())
		s.cur = nil
	}
	if s.commitF != nil {
		errs = append(errs, s.commitF.Close())
		s.commitF = nil
	}
	return errors.Join(errs...)
}

// Remove closes the spool and deletes its files.
func (s *Spool) Remove() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.closeFiles()
	// Deleted before the lock is let go: nobody resumes a spool half gone.
	err = errors.Join(err, removeSpoolDir(s.dir), s.unlock())
	if err != nil {
		return fmt.Errorf("spool %s: remove: %w", s.dir, err)
	}
	return nil
}

// Leave closes the spool and lets go of it with its files, for
// ResumeSpools to publish what it holds.
func (s *Spool) Leave() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := errors.Join(s.closeFiles(), s.unlock())
	if err != nil {
		return fmt.Errorf("spool %s: %w", s.dir, err)
	}
	return nil
}
