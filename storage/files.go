package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
)

// ErrFilesPending is wrapped by a Commit whose change is durable but whose
// artifact files could not all be written. The change stands; the files are
// written the next time the store is opened.
var ErrFilesPending = engine.ErrFilesPending

// pendingFile is one file write recorded by a commit.
type pendingFile struct {
	id         uint64
	run        engine.RunID
	path, from string
	body       []byte
}

// checkFileWrite refuses a file write that could land outside the data
// directory or is ambiguous.
func checkFileWrite(f engine.FileWrite) error {
	if err := checkPath(f.Path); err != nil {
		return fmt.Errorf("file %q: %w", f.Path, err)
	}
	if f.From != "" {
		if err := checkPath(f.From); err != nil {
			return fmt.Errorf("file %q: renaming from %q: %w", f.Path, f.From, err)
		}
		if len(f.Body) > 0 {
			return fmt.Errorf("file %q: has both a body and a file to rename from (%q)", f.Path, f.From)
		}
	}
	return nil
}

// checkPath accepts only a clean, relative, forward-slash path that stays
// inside the data directory and is not the database itself.
func checkPath(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p):
		return errors.New("absolute path: file paths are relative to the data directory")
	case strings.Contains(p, ".."):
		return errors.New(`path contains ".."`)
	case strings.Contains(p, `\`):
		return errors.New("path contains a backslash: use forward slashes")
	case p != path.Clean(p) || p == ".":
		return errors.New("path is not clean (empty, \".\" or trailing elements)")
	case !filepath.IsLocal(filepath.FromSlash(p)):
		return errors.New("path escapes the data directory")
	case p == FileName:
		return errors.New("path names the database file")
	}
	return nil
}

// writeFiles carries out pending file writes in order, then forgets the ones
// done in one small transaction. It stops at the first failure, since a
// later write may take the place of an earlier rename.
func (db *DB) writeFiles(files []pendingFile) error {
	db.fileMu.Lock()
	defer db.fileMu.Unlock()
	return db.writeFilesLocked(files)
}

func (db *DB) writeFilesLocked(files []pendingFile) error {
	var done [][]byte
	var ferr error
	for _, f := range files {
		if err := db.perform(f); err != nil {
			ferr = fmt.Errorf("run %s: file %s: %w", f.run, f.path, err)
			db.behind.Store(true)
			break
		}
		done = append(done, seqKey(f.id))
	}
	if len(done) > 0 {
		err := db.update(func(tx *bbolt.Tx) error {
			b := tx.Bucket(bucketFiles)
			for _, k := range done {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil && ferr == nil {
			ferr = fmt.Errorf("forget written files: %w", err)
		}
	}
	return ferr
}

func (db *DB) perform(f pendingFile) error {
	if f.from != "" {
		return db.files.rename(f.from, f.path)
	}
	return db.files.write(f.path, f.body)
}

// replayFiles carries out file writes a crash left pending. Every operation
// is safe to repeat, so a file written just before the crash is harmless.
func (db *DB) replayFiles() error {
	// The list is read under fileMu, so a write done meanwhile by another
	// commit is never done again from a stale list.
	db.fileMu.Lock()
	defer db.fileMu.Unlock()
	var pending []pendingFile
	err := db.view(func(tx *bbolt.Tx) error {
		arts := tx.Bucket(bucketArtifacts)
		return tx.Bucket(bucketFiles).ForEach(func(k, v []byte) error {
			f, err := readPending(arts, k, v)
			if err != nil {
				return fmt.Errorf("pending file %x: %w", k, err)
			}
			pending = append(pending, f)
			return nil
		})
	})
	if err != nil {
		return err
	}
	if len(pending) == 0 {
		db.behind.Store(false)
		return nil
	}
	if err := db.writeFilesLocked(pending); err != nil {
		return fmt.Errorf("write pending files: %w", err)
	}
	db.behind.Store(false)
	return nil
}

// readPending decodes a pending file record, copying its body out of the
// transaction.
func readPending(arts *bbolt.Bucket, k, v []byte) (pendingFile, error) {
	var rec fileRecord
	body, err := unframe(v, &rec)
	if err != nil {
		return pendingFile{}, err
	}
	if err := checkVersion(rec.V); err != nil {
		return pendingFile{}, err
	}
	if len(k) != 8 {
		return pendingFile{}, errors.New("key is not a sequence number")
	}
	if err := checkFileWrite(engine.FileWrite{Path: rec.Path, From: rec.From, Body: body}); err != nil {
		return pendingFile{}, err
	}
	if ref := rec.Ref; ref != nil {
		var b *bbolt.Bucket
		if b = arts.Bucket([]byte(rec.Run)); b != nil {
			body = b.Get(artKey(ref.Step, ref.Attempt, ref.Version))
		}
		if b == nil || body == nil {
			return pendingFile{}, fmt.Errorf("%s refers to run %s step %d attempt %d artifact version %d, which is not stored",
				rec.Path, rec.Run, ref.Step, ref.Attempt, ref.Version)
		}
	}
	return pendingFile{
		id: seqNum(k), run: engine.RunID(rec.Run), path: rec.Path, from: rec.From, body: bytes.Clone(body),
	}, nil
}

// dataFiles writes artifact files inside the data directory.
type dataFiles struct {
	root   *os.Root // file names cannot leave it, not even through a symlink
	noSync bool     // tests only
}

// write replaces name with body so that a reader (or a crash) sees
// either the old file or the new one: a temp file in the same directory,
// fsynced, renamed over name, and the directory fsynced.
func (d dataFiles) write(name string, body []byte) error {
	root := d.root
	dir := path.Dir(name)
	if err := d.ensureDir(dir); err != nil {
		return err
	}
	tmp := path.Join(dir, fmt.Sprintf(".%s.%016x.tmp", path.Base(name), rand.Uint64()))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(body)
	if err == nil && !d.noSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return d.syncDir(dir)
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
	if err := root.Rename(from, to); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := d.syncDir(path.Dir(to)); err != nil {
		return err
	}
	if path.Dir(from) != path.Dir(to) {
		return d.syncDir(path.Dir(from))
	}
	return nil
}

// ensureDir creates dir when it is missing and fsyncs the directories above
// it, so the new entries survive a crash too.
func (d dataFiles) ensureDir(dir string) error {
	if dir == "." {
		return nil
	}
	if st, err := d.root.Stat(dir); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		return nil
	}
	if err := d.root.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for up := dir; up != "."; {
		up = path.Dir(up)
		if err := d.syncDir(up); err != nil {
			return err
		}
	}
	return nil
}

func (d dataFiles) syncDir(dir string) error {
	if d.noSync {
		return nil
	}
	f, err := d.root.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
