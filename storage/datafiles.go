package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"sync/atomic"
)

// dataFiles writes artifact files inside the data directory. A write or a
// rename is atomic for readers (they see the old file or the new one) but
// not durable on its own: after a power cut the file may be missing or
// short until the next open rewrites it. sync makes a batch durable.
type dataFiles struct {
	root   *os.Root // file names cannot leave it, not even through a symlink
	noSync bool     // tests only
	// syncs counts the batches made durable (calls to sync), so tests can
	// bound them: nothing else fsyncs a file.
	syncs *atomic.Int64
	ahead *ahead // nil for a store opened read-only
	// dirs holds the folders known to be there, made or found by a write:
	// a write into one needs no look first. Used under the DB's fileMu.
	dirs map[string]bool
}

// write replaces name with body so that a reader sees either the old file
// or the new one: the body goes into a new file (one made ahead, else a
// temp file beside name), which is then renamed over name.
func (d dataFiles) write(name string, body []byte) error {
	dir := path.Dir(name)
	known := d.dirs[dir]
	if !known && dir != "." {
		if sd, ok := d.ahead.takeDir(); ok {
			// Renaming the folder made ahead to dir fails when dir is
			// there already (or its parent is not): then dir is made, or
			// found, as it would be without it.
			if d.root.Rename(sd.name, dir) == nil {
				d.dirs[dir] = true
				return d.fill(sd, path.Base(name), body)
			}
			d.ahead.giveBack(sd)
		}
		if err := d.ensureDir(dir); err != nil {
			return err
		}
		d.dirs[dir] = true
	}
	err := d.replace(name, body)
	if known && errors.Is(err, fs.ErrNotExist) {
		// The folder went since it was known: make it again.
		delete(d.dirs, dir)
		return d.write(name, body)
	}
	return err
}

// replace writes body into a new file and renames it over name, whose
// folder is there.
func (d dataFiles) replace(name string, body []byte) error {
	tmp, f, err := d.tempFile(name)
	if err != nil {
		return err
	}
	_, err = f.Write(body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.root.Rename(tmp, name)
	}
	if err != nil {
		_ = d.root.Remove(tmp)
	}
	return err
}

// missingDir reports whether dir is missing, and refuses one that is not
// a directory.
func (d dataFiles) missingDir(dir string) (bool, error) {
	if dir == "." {
		return false, nil
	}
	st, err := d.root.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true, nil
	case err != nil:
		return false, err
	case !st.IsDir():
		return false, fmt.Errorf("%s is not a directory", dir)
	}
	return false, nil
}

// fill writes body into the file of a folder made ahead and now in place,
// and names it base: a rename inside the folder.
func (d dataFiles) fill(sd spareDir, base string, body []byte) error {
	defer sd.root.Close()
	_, err := sd.file.f.Write(body)
	if cerr := sd.file.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = sd.root.Rename(sd.file.name, base)
	}
	if err != nil {
		_ = sd.root.Remove(sd.file.name)
	}
	return err
}

// tempFile is a new, empty file to write name's body into: the one made
// ahead, else a temp file beside name.
func (d dataFiles) tempFile(name string) (string, *os.File, error) {
	if s, ok := d.ahead.takeFile(); ok {
		return s.name, s.f, nil
	}
	tmp := path.Join(path.Dir(name), fmt.Sprintf(".%s.%016x.tmp", path.Base(name), rand.Uint64()))
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	return tmp, f, err
}

// rename moves from to to. When to already exists the rename is taken
// as done: after a crash it may have happened already, and a newer file may
// now stand at from, which must not be moved.
func (d dataFiles) rename(from, to string) error {
	root := d.root
	if _, err := root.Lstat(to); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, err := root.Lstat(from); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := d.ensureDir(path.Dir(to)); err != nil {
		return err
	}
	if err := root.Rename(from, to); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// ensureDir creates dir when it is missing.
func (d dataFiles) ensureDir(dir string) error {
	missing, err := d.missingDir(dir)
	if err != nil || !missing {
		return err
	}
	return d.root.MkdirAll(dir, 0o700)
}

// fsync fsyncs one file or directory under the root.
func (d dataFiles) fsync(name string) error {
	f, err := d.root.Open(name)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// sync makes the files in paths durable: an fsync of each, and of the
// directories that hold them up to the data directory, since a new name
// is durable only once its directory is. Each fsync is of gonogo's own
// files, never of the whole file system's (syncfs would wait for whatever
// else is being written on the machine).
func (d dataFiles) sync(paths []string) error {
	d.syncs.Add(1)
	if d.noSync {
		return nil
	}
	dirs := map[string]bool{}
	for _, p := range paths {
		if err := d.fsync(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for dir := path.Dir(p); !dirs[dir]; dir = path.Dir(dir) {
			dirs[dir] = true
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(dirs)) {
		if err := d.fsync(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
