package ingest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/agentwire/agentwire/pkg/adapters/adapter"
)

// spoolRecord is one frame kept in a spool.
type spoolRecord struct {
	dir  adapter.Direction
	at   time.Time
	data []byte
	exit bool // the exit frame (not kept on disk: a stderr-kind record is published as it is)
}

// spoolPos is a position in a spool: a segment and an offset in it.
type spoolPos struct {
	seg uint64
	off int64
}

// recordHeader: direction (1), receive time in Unix nanoseconds (8),
// length (4).
const recordHeader = 1 + 8 + 4

var directionCodes = map[adapter.Direction]byte{"": 0, adapter.FromAgent: 1, adapter.FromClient: 2}

func directionOf(code byte) adapter.Direction {
	for d, c := range directionCodes {
		if c == code {
			return d
		}
	}
	return ""
}

// Spool is a bounded first-in first-out queue of frames on disk, in
// segment files of a directory of its own. Append never blocks on the
// reader: a frame that does not fit in max bytes is dropped and counted.
// Next reads records in order; Commit deletes the segments read wholly.
type Spool struct {
	dir    string
	max    int64
	segMax int64

	mu      sync.Mutex
	cur     *os.File // segment being written
	curSeg  uint64
	lengths map[uint64]int64 // bytes written to each live segment
	size    int64            // bytes in live segments
	records map[uint64]int   // records in each live segment
	dropped uint64
	closed  bool
	notify  chan struct{}

	read     spoolPos // next record to read
	readFile *os.File
	readSeg  uint64
}

// OpenSpool creates a spool in dir (which must not hold one already in use)
// holding at most max bytes.
func OpenSpool(dir string, maxBytes int64) (*Spool, error) {
	if maxBytes <= 0 {
		return nil, errors.New("spool: the buffer size must be positive")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	for _, p := range old {
		_ = os.Remove(p) // a previous run's leftovers: their ordinals are gone with it
	}
	s := &Spool{
		dir: dir, max: maxBytes, segMax: min(8<<20, max(maxBytes/4, 64<<10)),
		lengths: map[uint64]int64{}, records: map[uint64]int{}, notify: make(chan struct{}, 1),
	}
	s.read = spoolPos{seg: 1}
	if err := s.rotate(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Spool) segPath(n uint64) string { return filepath.Join(s.dir, fmt.Sprintf("%016d.seg", n)) }

// rotate starts a new segment; s.mu is held (or s is new).
func (s *Spool) rotate() error {
	if s.cur != nil {
		if err := s.cur.Close(); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
	}
	s.curSeg++
	f, err := os.OpenFile(s.segPath(s.curSeg), os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	s.cur = f
	s.lengths[s.curSeg] = 0
	return nil
}

// Append adds a record; it reports false when the spool is full (or
// failing) and the record was dropped.
func (s *Spool) Append(r spoolRecord) bool {
	n := int64(recordHeader + len(r.data))
	buf := make([]byte, n)
	buf[0] = directionCodes[r.dir]
	binary.BigEndian.PutUint64(buf[1:9], uint64(r.at.UnixNano()))
	binary.BigEndian.PutUint32(buf[9:13], uint32(len(r.data))) //nolint:gosec // frames are far below 4 GiB
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
	if _, err := s.cur.Write(buf); err != nil {
		s.dropped++
		return false
	}
	s.lengths[s.curSeg] += n
	s.records[s.curSeg]++
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

// Records counts the records the spool holds (read but not committed
// included).
func (s *Spool) Records() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.records {
		n += c
	}
	return n
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
// stored). It returns io.EOF after CloseWrite once all are read, and the
// error of done when it is closed first.
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
			f, err := os.Open(s.segPath(s.read.seg))
			if err != nil {
				return out, fmt.Errorf("spool: %w", err)
			}
			s.readFile, s.readSeg = f, s.read.seg
		}
		var h [recordHeader]byte
		if _, err := s.readFile.ReadAt(h[:], s.read.off); err != nil {
			return out, fmt.Errorf("spool: read a record header: %w", err)
		}
		data := make([]byte, binary.BigEndian.Uint32(h[9:13]))
		if _, err := s.readFile.ReadAt(data, s.read.off+recordHeader); err != nil {
			return out, fmt.Errorf("spool: read a record: %w", err)
		}
		out = append(out, spoolRecord{
			dir:  directionOf(h[0]),
			at:   time.Unix(0, int64(binary.BigEndian.Uint64(h[1:9]))), //nolint:gosec // written from a time
			data: data,
		})
		s.read.off += int64(recordHeader + len(data))
	}
	return out, nil
}

// Commit frees the segments wholly before pos.
func (s *Spool) Commit(pos spoolPos) {
	s.mu.Lock()
	defer s.mu.Unlock()
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
		_ = os.Remove(s.segPath(seg))
		s.size -= s.lengths[seg]
		delete(s.lengths, seg)
		delete(s.records, seg)
	}
	// The current segment, read and committed to its end, is emptied.
	if pos.seg == s.curSeg && pos.off == s.lengths[s.curSeg] && pos.off > 0 && s.read == pos {
		if err := s.cur.Truncate(0); err == nil {
			s.size -= s.lengths[s.curSeg]
			s.lengths[s.curSeg] = 0
			s.records[s.curSeg] = 0
			s.read = spoolPos{seg: s.curSeg}
		}
	}
}

// Remove closes the spool and deletes its files.
func (s *Spool) Remove() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.readFile != nil {
		_ = s.readFile.Close()
	}
	err := s.cur.Close()
	return errors.Join(err, os.RemoveAll(s.dir))
}
