package storage

import "golang.org/x/sys/unix"

// canWrite reports whether this process may write path, as the kernel
// decides for its effective user: false for a file of another user, and
// for anything on a read-only mount, root included.
func canWrite(path string) bool {
	return unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS) == nil
}
