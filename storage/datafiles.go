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
// or the new one: the body goes into a new file (one made ahead, see stage,
// else a temp file beside name), which is then renamed over name.
func (d dataFiles) write(name string, body []byte) error {
	s, ok, err := d.stage(name, body)
	switch {
	case err != nil:
		return err
	case ok:
		return d.place(s)
	}
	dir := path.Dir(name)
	err = d.replace(name, body)
	if errors.Is(err, fs.ErrNotExist) {
		// The folder is missing, or went since it was known: make it.
		delete(d.dirs, dir)
		if err = d.ensureDir(dir); err == nil {
			err = d.replace(name, body)
		}
	}
	if err == nil {
		d.dirs[dir] = true
	}
	return err
}

// staged is a file's body written into what was made ahead, not yet where
// it goes: place renames it there, drop removes it. A commit stages its
// files while its transaction commits and places them once it has, so
// that a file is never in place for a change that is not durable. Until
// placed it is in aheadDir, which the next open clears.
type staged struct {
	name string // where it goes, relative to the data directory
	tmp  string // the file holding the body, relative to the data directory
	// folder, when set, is the folder made ahead that holds tmp, already
	// named as name's file: it becomes name's folder, so that one rename
	// puts both in place.
	folder string
}

// stage writes body into what was made ahead for name: a folder and its
// file when name's folder is missing, else a file. ok is false when
// nothing is ready; the caller then writes name as if there were no ahead.
// It changes nothing outside aheadDir, and reads dirs only.
func (d dataFiles) stage(name string, body []byte) (s staged, ok bool, err error) {
	dir := path.Dir(name)
	if !d.dirs[dir] {
		missing, err := d.missingDir(dir)
		if err != nil {
			return s, false, err
		}
		if missing {
			if sd, ok := d.ahead.takeDir(); ok {
				return d.stageInFolder(sd, name, body)
			}
		}
	}
	f, ok := d.ahead.takeFile()
	if !ok {
		return s, false, nil
	}
	if err := writeClose(f.f, body); err != nil {
		_ = d.root.Remove(f.name)
		return s, false, err
	}
	return staged{name: name, tmp: f.name}, true, nil
}

// stageInFolder writes body into the file of folder sd and names it as
// name's file: a rename inside the folder, still in aheadDir.
func (d dataFiles) stageInFolder(sd spareDir, name string, body []byte) (staged, bool, error) {
	defer sd.root.Close()
	base := path.Base(name)
	err := writeClose(sd.file.f, body)
	if err == nil && base != spareName {
		err = sd.root.Rename(spareName, base)
	}
	if err != nil {
		_ = d.root.RemoveAll(sd.name)
		return staged{}, false, err
	}
	return staged{name: name, tmp: path.Join(sd.name, base), folder: sd.name}, true, nil
}

// place renames a staged file into place: its folder, when it has one and
// name's folder is still missing, else the file alone, making its folder
// when that is missing.
func (d dataFiles) place(s staged) error {
	dir := path.Dir(s.name)
	if s.folder != "" {
		if d.root.Rename(s.folder, dir) == nil {
			d.dirs[dir] = true
			return nil
		}
		// The folder is there after all, or its parent is not.
		defer func() { _ = d.root.RemoveAll(s.folder) }()
	}
	err := d.root.Rename(s.tmp, s.name)
	if errors.Is(err, fs.ErrNotExist) {
		delete(d.dirs, dir)
		if err = d.ensureDir(dir); err == nil {
			err = d.root.Rename(s.tmp, s.name)
		}
	}
	if err != nil {
		d.drop(s)
		return err
	}
	d.dirs[dir] = true
	return nil
}

// drop removes a staged file that is not to be placed.
func (d dataFiles) drop(s staged) {
	if s.folder != "" {
		_ = d.root.RemoveAll(s.folder)
		return
	}
	_ = d.root.Remove(s.tmp)
}

func writeClose(f *os.File, body []byte) error {
	_, err := f.Write(body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// replace writes body into a temp file beside name and renames it over
// name, whose folder is there.
func (d dataFiles) replace(name string, body []byte) error {
	tmp := path.Join(path.Dir(name), fmt.Sprintf(".%s.%016x.tmp", path.Base(name), rand.Uint64()))
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = writeClose(f, body)
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
