package storage

import (
	"errors"

	"golang.org/x/sys/unix"
)

// sync makes the files in paths durable. On Linux one syncfs of the data
// directory's file system does it for any number of files, their
// directories included: the cost of a batch is about one fsync.
func (d dataFiles) sync(paths []string) error {
	d.syncs.Add(1)
	if d.noSync {
		return nil
	}
	f, err := d.root.Open(".")
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); !errors.Is(err, unix.ENOSYS) {
		return err
	}
	return d.syncEach(paths)
}

// canWrite reports whether this process may write path, as the kernel
// decides for its effective user: false for a file of another user, and
// for anything on a read-only mount, root included.
func canWrite(path string) bool {
	return unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS) == nil
}
