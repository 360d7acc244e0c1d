//go:build !unix

package ingest

import (
	"errors"
	"io/fs"
	"os"
)

// lockFile takes a lock on path by creating it; ok is false when it
// exists. Unlike a kernel lock, it outlives a crashed holder: the spool of
// a proxy that crashed here is not resumed until its lock file is
// deleted.
func lockFile(path string) (unlock func() error, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if err := f.Close(); err != nil {
		return nil, false, err
	}
	return func() error {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}, true, nil
}
