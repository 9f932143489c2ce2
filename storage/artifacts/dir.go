package artifacts

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Dir keeps artifacts as files under one directory, such as a volume every
// worker mounts: a key is a file's path relative to it. Files are 0o600 and
// folders 0o700. Every call opens the directory afresh (as an os.Root, so
// no key can leave it, not even through a symlink), so a Dir holds nothing
// to close.
type Dir struct {
	path string
}

// NewDir returns the store kept in the directory at path. A relative path
// is made absolute now. A missing directory is created by the first Put,
// not here, so commands that only read (runs, show) leave no empty folder
// behind; a path that names something other than a directory is refused
// at once.
func NewDir(path string) (*Dir, error) {
	if path == "" {
		return nil, errors.New("artifact directory: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("artifact directory %s: %w", path, err)
	}
	switch fi, err := os.Stat(abs); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("artifact directory: %w", err)
	case !fi.IsDir():
		return nil, fmt.Errorf("artifact directory %s: not a directory", abs)
	}
	return &Dir{path: abs}, nil
}

// Path is the directory's absolute path.
func (d *Dir) Path() string { return d.path }

// Put stores body under key, unless key already holds it (see the package
// contract). The body is written to a temporary file in the key's folder
// and synced, then published by a hard link to the key's name: link(2)
// never replaces an existing name, so of two processes racing for one key
// exactly one links, and the other compares its body with the winner's.
// A reader never sees a partial file. The folder is synced afterwards, so a
// Put that returned survives a crash.
func (d *Dir) Put(ctx context.Context, key string, body []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("put artifact %s: %w", key, err)
	}
	if err := os.MkdirAll(d.path, 0o700); err != nil {
		return fmt.Errorf("put artifact %s: artifact directory: %w", key, err)
	}
	root, err := os.OpenRoot(d.path)
	if err != nil {
		return fmt.Errorf("put artifact %s: %w", key, err)
	}
	defer root.Close()
	if err := put(root, filepath.FromSlash(key), body); err != nil {
		return fmt.Errorf("put artifact %s in %s: %w", key, d.path, err)
	}
	return nil
}

func put(root *os.Root, name string, body []byte) error {
	dir := filepath.Dir(name)
	if err := ensureDir(root, dir); err != nil {
		return err
	}
	tmp, err := writeTemp(root, dir, body)
	if err != nil {
		return err
	}
	err = root.Link(tmp, name)
	// The published name, if any, keeps the bytes; a temporary file that
	// cannot be removed costs only space and is never read.
	_ = root.Remove(tmp)
	switch {
	case errors.Is(err, fs.ErrExist):
		if err := sameBody(root, name, body); err != nil {
			return err
		}
	case errors.Is(err, errors.ErrUnsupported) || errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("publish with a hard link (the file system must support them): %w", err)
	case err != nil:
		return fmt.Errorf("publish: %w", err)
	}
	// Also after finding the same body: the Put that linked it may not
	// have synced the folder yet.
	return syncDir(root, dir)
}

// sameBody accepts an existing file that holds body and refuses any other.
func sameBody(root *os.Root, name string, body []byte) error {
	got, err := root.ReadFile(name)
	if err != nil {
		return fmt.Errorf("read the stored artifact: %w", err)
	}
	return compare(got, body)
}

// writeTemp writes body to a new, synced temporary file in dir and returns
// its name.
func writeTemp(root *os.Root, dir string, body []byte) (string, error) {
	name := filepath.Join(dir, ".tmp-"+rand.Text())
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("create temporary file: %w", err)
	}
	_, err = f.Write(body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(name)
		return "", fmt.Errorf("write temporary file: %w", err)
	}
	return name, nil
}

// ensureDir creates the folders of dir that are missing, syncing the
// parent of each so the new entries survive a crash.
func ensureDir(root *os.Root, dir string) error {
	if dir == "." {
		return nil
	}
	if err := ensureDir(root, filepath.Dir(dir)); err != nil {
		return err
	}
	err := root.Mkdir(dir, 0o700)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create folder: %w", err)
	}
	return syncDir(root, filepath.Dir(dir))
}

func syncDir(root *os.Root, dir string) error {
	f, err := root.Open(dir)
	if err != nil {
		return fmt.Errorf("sync folder: %w", err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}

// Get returns the body stored under key.
func (d *Dir) Get(ctx context.Context, key string) ([]byte, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("get artifact %s: %w", key, err)
	}
	root, err := os.OpenRoot(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		// Nothing was ever put.
		return nil, fmt.Errorf("get artifact %s in %s: %w", key, d.path, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get artifact %s: %w", key, err)
	}
	defer root.Close()
	body, err := root.ReadFile(filepath.FromSlash(key))
	// A folder of the key's path being a file means the key holds nothing.
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, fmt.Errorf("get artifact %s in %s: %w", key, d.path, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get artifact %s in %s: %w", key, d.path, err)
	}
	return body, nil
}
