package ingest

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// ResumeSummary is what ResumeSpools did.
type ResumeSummary struct {
	// Spools counts the spools stored wholly, and deleted.
	Spools int
	// Frames counts the frames published from them.
	Frames uint64
	// Busy counts the spools passed by because a running proxy owns them.
	Busy int
}

// ResumeSpools publishes the frames that proxies left in dir, their buffer
// directory, because NATS did not store them before the proxy exited (or
// the proxy crashed). Each spool's frames go to its own tenant and
// session, in order and with the ordinals they were given when they
// crossed the proxy, so frames RAW already holds are not stored twice
// (skipped when the spool knows they were stored, else dropped by RAW's
// duplicate window). Spools are taken oldest first; a spool is deleted
// once all of it is stored, and one a running proxy owns is passed by.
// When ctx ends first, what was stored is recorded in the spool and the
// rest waits for the next call.
func ResumeSpools(ctx context.Context, layout *bus.Layout, dir string, log *slog.Logger) (ResumeSummary, error) {
	var sum ResumeSummary
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return sum, nil
	}
	if err != nil {
		return sum, fmt.Errorf("read the buffer directory: %w", err)
	}
	type found struct {
		path string
		meta SpoolMeta
	}
	var spools []found
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		meta, err := readSpoolMeta(path)
		if err != nil {
			// Not a spool of this version: the buffers of versions before
			// spools were resumable hold no ordinals to publish them with.
			log.Debug("not a resumable spool", "dir", path, "err", err)
			continue
		}
		spools = append(spools, found{path, meta})
	}
	slices.SortStableFunc(spools, func(a, b found) int { return a.meta.Started.Compare(b.meta.Started) })
	for _, s := range spools {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		unlock, ok, err := lockFile(filepath.Join(s.path, spoolLockFile))
		if errors.Is(err, fs.ErrNotExist) {
			continue // resumed and deleted meanwhile
		}
		if err != nil {
			return sum, fmt.Errorf("lock the spool %s: %w", s.path, err)
		}
		if !ok {
			sum.Busy++
			continue
		}
		n, resumed, err := resumeSpool(ctx, layout, s.path, s.meta, log)
		sum.Frames += n
		if resumed {
			sum.Spools++
		}
		if uerr := unlock(); uerr != nil && !errors.Is(uerr, fs.ErrNotExist) && err == nil {
			err = fmt.Errorf("unlock the spool %s: %w", s.path, uerr)
		}
		if err != nil {
			return sum, err
		}
	}
	return sum, nil
}

func readSpoolMeta(dir string) (SpoolMeta, error) {
	var meta SpoolMeta
	b, err := os.ReadFile(filepath.Join(dir, spoolMetaFile)) //nolint:gosec // a file of the buffer directory the user names
	if err != nil {
		return meta, err
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return meta, fmt.Errorf("%s: %w", spoolMetaFile, err)
	}
	if meta.Version != spoolVersion {
		return meta, fmt.Errorf("%s: version %d, want %d", spoolMetaFile, meta.Version, spoolVersion)
	}
	return meta, nil
}

// resumeSpool publishes a locked spool's frames after the last one it
// knows was stored, a segment at a time, and deletes it once all are.
func resumeSpool(ctx context.Context, layout *bus.Layout, dir string, meta SpoolMeta, log *slog.Logger) (frames uint64, resumed bool, err error) {
	// The meta read before the lock was taken may be of a spool that
	// another resumer was deleting meanwhile (the meta goes first).
	if _, err := os.Stat(filepath.Join(dir, spoolMetaFile)); errors.Is(err, fs.ErrNotExist) {
		return 0, false, removeSpoolDir(dir)
	}
	pub, err := NewPublisher(layout, meta.Tenant, log)
	if err != nil {
		return 0, false, fmt.Errorf("spool %s: %w", dir, err)
	}
	committedF, err := os.OpenFile(filepath.Join(dir, spoolCommittedFile), os.O_CREATE|os.O_RDWR, 0o600) //nolint:gosec // a file of the buffer directory
	if err != nil {
		return 0, false, fmt.Errorf("spool %s: %w", dir, err)
	}
	defer func() { _ = committedF.Close() }() // written with WriteAt, checked there
	var b [8]byte
	var committed uint64
	if _, err := committedF.ReadAt(b[:], 0); err == nil {
		committed = binary.BigEndian.Uint64(b[:])
	}
	segs, err := filepath.Glob(filepath.Join(dir, "*"+spoolSegmentExt))
	if err != nil {
		return 0, false, fmt.Errorf("spool %s: %w", dir, err)
	}
	slices.Sort(segs) // zero-padded numbers: in order
	log.Info("publishing the frames a proxy left in its buffer", "dir", dir, "tenant", meta.Tenant, "session", meta.Session, "stored_before", committed)
	for _, seg := range segs {
		last, n, err := publishSegment(ctx, pub, seg, meta, committed, log)
		frames += n
		if err != nil {
			return frames, false, fmt.Errorf("spool %s: %w", dir, err)
		}
		if err := pub.Flush(ctx); err != nil {
			return frames, false, fmt.Errorf("spool %s: store the frames of %s: %w", dir, filepath.Base(seg), err)
		}
		if last > committed {
			committed = last
			binary.BigEndian.PutUint64(b[:], committed)
			if _, err := committedF.WriteAt(b[:], 0); err != nil {
				return frames, false, fmt.Errorf("spool %s: record the frames stored: %w", dir, err)
			}
		}
		if err := os.Remove(seg); err != nil {
			return frames, false, fmt.Errorf("spool %s: %w", dir, err)
		}
	}
	log.Info("published the frames a proxy left", "session", meta.Session, "tenant", meta.Tenant, "frames", frames, "last_ordinal", committed)
	if err := removeSpoolDir(dir); err != nil {
		return frames, false, fmt.Errorf("spool %s: delete it: %w", dir, err)
	}
	return frames, true, nil
}

// removeSpoolDir deletes a spool directory, its meta first: a resumer that
// takes the lock while it is being deleted finds no meta and leaves it.
func removeSpoolDir(dir string) error {
	if err := os.Remove(filepath.Join(dir, spoolMetaFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.RemoveAll(dir)
}

// publishSegment publishes the records of a segment file after the
// ordinal committed, and returns the last ordinal it published.
func publishSegment(ctx context.Context, pub *Publisher, path string, meta SpoolMeta, committed uint64, log *slog.Logger) (last, n uint64, err error) {
	f, err := os.Open(path) //nolint:gosec // a file of the buffer directory
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = f.Close() }() // read-only
	info, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	for off := int64(0); off < info.Size(); {
		r, size, err := readRecord(f, off)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			// Its writer died in the middle of a record: the record was
			// never whole, so it was never published either.
			log.Warn("a spool segment ends in the middle of a record; the record is lost", "file", path, "offset", off)
			break
		}
		if err != nil {
			return last, n, err
		}
		off += size
		if r.ordinal <= committed {
			continue
		}
		err = pub.PublishAt(ctx, Frame{
			SessionKey: meta.Session, Dialect: meta.Dialect, Provider: canonical.Provider(meta.Provider),
			Direction: r.dir, Bytes: r.data, ReceivedAt: r.at,
		}, r.ordinal)
		if err != nil {
			return last, n, fmt.Errorf("session %s: %w", meta.Session, err)
		}
		last = r.ordinal
		n++
	}
	return last, n, nil
}
