//go:build unix

package ingest

import (
	"io/fs"
	"syscall"
)

// identify is the device and inode of a file, which survive a rename.
func identify(info fs.FileInfo) fileID {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}
	}
	return fileID{Dev: uint64(st.Dev), Ino: st.Ino} //nolint:unconvert // Dev is int32 on some systems; only equality matters
}
