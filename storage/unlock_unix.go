//go:build unix

package storage

import (
	"os"
	"syscall"
)

// unlock lets go of bbolt's flock on f. Closing f alone is not enough after
// bbolt panicked: its memory map still holds the open file, and the lock
// with it.
func unlock(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
