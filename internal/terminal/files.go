package terminal

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ReadLimited reads a file, but never more than one byte past limit, so
// gonogo never holds all of a file that is too large. what names the file
// in errors ("plan file", "edit file").
func ReadLimited(path string, limit int64, what string) ([]byte, error) {
	return readFile(path, limit, what, false)
}

// ReadRegular is readLimited for what must be a regular file (an edit's
// replacement artifact): a FIFO, a device, a socket or a directory is
// refused at once, before a byte is read. The file is opened without
// blocking, so a FIFO nobody writes to cannot hang gonogo at its open.
func ReadRegular(path string, limit int64, what string) ([]byte, error) {
	return readFile(path, limit, what, true)
}

func readFile(path string, limit int64, what string, regularOnly bool) ([]byte, error) {
	flags := os.O_RDONLY
	if regularOnly {
		flags |= syscall.O_NONBLOCK
	}
	fh, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return nil, openError(path, what, err)
	}
	defer fh.Close()
	if err := refuseKind(fh, path, what, regularOnly); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read the %s %s: %w", what, path, err)
	}
	return b, nil
}

// openError says why the file path could not be opened to read.
func openError(path, what string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s %s does not exist", what, path)
	}
	return fmt.Errorf("read the %s: %w", what, err)
}

// refuseKind refuses to read a directory, and, when regularOnly, anything
// but a regular file; a file whose kind cannot be told is read.
func refuseKind(fh *os.File, path, what string, regularOnly bool) error {
	fi, err := fh.Stat()
	if err != nil {
		return nil
	}
	switch {
	case regularOnly && !fi.Mode().IsRegular():
		return fmt.Errorf("%s %s is %s, not a regular file", what, path, FileKind(fi.Mode()))
	case fi.IsDir():
		return fmt.Errorf("%s is a directory, not a %s", path, what)
	}
	return nil
}

// FileKind names what a file that is not a regular file is.
func FileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// ArtifactGone reports whether an attempt's artifact file (file, relative
// to the data directory, as engine.Attempt.File) is gone from disk:
// deleted or moved since gonogo wrote it. The store keeps the bytes, and
// show, its JSON and export say the file is gone rather than name a path
// that leads nowhere. A file gonogo cannot look at is not called gone.
func ArtifactGone(data, file string) bool {
	if file == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(data, filepath.FromSlash(file)))
	return errors.Is(err, fs.ErrNotExist)
}
