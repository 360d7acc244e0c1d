//go:build unix

package ingest

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive lock on path (created if need be) without
// waiting; ok is false when another process, or another open of it in
// this one, holds it. The kernel lets go of the lock when its holder
// dies, so a crashed proxy's spool is resumable.
func lockFile(path string) (unlock func() error, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600) //nolint:gosec // a file of our spool directory
	if err != nil {
		return nil, false, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return f.Close, true, nil
}
