package storage

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
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

// Artifact files are written without an fsync of their own: the database
// is the truth. A file's record stays until an fsync has made it durable:
// once it is syncAfter old (by then the kernel has usually written it, and
// the fsync costs next to nothing), when syncBatch files wait, or when the
// store is closed. Until then a crash may lose or cut short the file, and
// the next open writes it again from the store; the batch bounds what that
// open checks.
const (
	syncBatch = 256
	syncAfter = 30 * time.Second
)

// writtenFile is a file write carried out whose record stays until the
// file is synced.
type writtenFile struct {
	path string
	at   time.Time
}

// writeFiles carries out pending file writes in order. It stops at the
// first failure, since a later write may take the place of an earlier
// rename. Their records stay until syncFiles.
func (db *DB) writeFiles(files []pendingFile) error {
	db.fileMu.Lock()
	defer db.fileMu.Unlock()
	return db.writeFilesLocked(files)
}

func (db *DB) writeFilesLocked(files []pendingFile) error {
	var ferr error
	now := db.now()
	for _, f := range files {
		if err := db.perform(f); err != nil {
			ferr = fmt.Errorf("run %s: file %s: %w", f.run, f.path, err)
			db.behind.Store(true)
			break
		}
		db.written[f.id] = writtenFile{path: f.path, at: now}
	}
	// A failed sync costs this commit nothing: its files are written,
	// their records stay, and a later sync, Close (which reports it) or
	// the next open makes them durable.
	_ = db.syncFiles(db.due(now))
	return ferr
}

// due is the written files to sync now: those syncAfter old, or all of
// them once syncBatch wait.
func (db *DB) due(now time.Time) []uint64 {
	var ids []uint64
	for id, w := range db.written {
		if len(db.written) >= syncBatch || now.Sub(w.at) >= syncAfter {
			ids = append(ids, id)
		}
	}
	return ids
}

// syncFiles makes the written files ids, and the files also, durable, then
// forgets the records of ids in one transaction. When it fails, the
// records stay: the next open writes the files again. The caller holds
// fileMu.
func (db *DB) syncFiles(ids []uint64, also ...string) error {
	if len(ids) == 0 && len(also) == 0 {
		return nil
	}
	paths := also
	for _, id := range ids {
		paths = append(paths, db.written[id].path)
	}
	if err := db.files.sync(paths); err != nil {
		return fmt.Errorf("sync artifact files: %w", err)
	}
	err := db.update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketFiles)
		for _, id := range ids {
			if err := b.Delete(seqKey(id)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("forget written files: %w", err)
	}
	for _, id := range ids {
		delete(db.written, id)
	}
	return nil
}

// unsynced is every written file not yet synced.
func (db *DB) unsynced() []uint64 { return slices.Collect(maps.Keys(db.written)) }

func (db *DB) perform(f pendingFile) error {
	if f.from != "" {
		return db.files.rename(f.from, f.path)
	}
	return db.files.write(f.path, f.body)
}

// replayFiles carries out, in commit order, the file writes an earlier
// failure left undone (those of later commits too). Every operation is
// safe to repeat.
func (db *DB) replayFiles() error {
	// The list is read under fileMu, so a write done meanwhile by another
	// commit is never done again from a stale list.
	db.fileMu.Lock()
	defer db.fileMu.Unlock()
	pending, err := db.pendingFiles()
	if err != nil {
		return err
	}
	if err := db.writeFilesLocked(pending); err != nil {
		return fmt.Errorf("write pending files: %w", err)
	}
	db.behind.Store(false)
	return nil
}

// restoreFiles brings the artifact files up to date with the store when
// it is opened. The records left are file writes gonogo stopped before
// carrying out, and writes carried out without an fsync of their own,
// which a power cut may have lost or cut short. It carries them all out
// again, in commit order, then rewrites from the store every artifact file
// of their runs that is missing or differs from its artifact (a replayed
// rename cannot tell), and syncs.
func (db *DB) restoreFiles() error {
	db.fileMu.Lock()
	defer db.fileMu.Unlock()
	pending, err := db.pendingFiles()
	if err != nil || len(pending) == 0 {
		return err
	}
	for _, f := range pending {
		if err := db.perform(f); err != nil {
			db.behind.Store(true)
			return fmt.Errorf("write pending files: run %s: file %s: %w", f.run, f.path, err)
		}
		db.written[f.id] = writtenFile{path: f.path}
	}
	var rewritten []string
	for _, id := range runsOf(pending) {
		paths, err := db.restoreRunFiles(id)
		rewritten = append(rewritten, paths...)
		if err != nil {
			db.behind.Store(true)
			return fmt.Errorf("rewrite the files of run %s: %w", id, err)
		}
	}
	return db.syncFiles(db.unsynced(), rewritten...)
}

// pendingFiles reads the records of file writes not yet carried out by
// this process, in commit order. The caller holds fileMu.
func (db *DB) pendingFiles() ([]pendingFile, error) {
	var pending []pendingFile
	err := db.view(func(tx *bbolt.Tx) error {
		arts := tx.Bucket(bucketArtifacts)
		return tx.Bucket(bucketFiles).ForEach(func(k, v []byte) error {
			if len(k) == 8 {
				if _, done := db.written[seqNum(k)]; done {
					return nil
				}
			}
			f, err := readPending(arts, k, v)
			if err != nil {
				return fmt.Errorf("pending file %x: %w", k, err)
			}
			pending = append(pending, f)
			return nil
		})
	})
	return pending, err
}

func runsOf(files []pendingFile) []engine.RunID {
	var ids []engine.RunID
	for _, f := range files {
		if !slices.Contains(ids, f.run) {
			ids = append(ids, f.run)
		}
	}
	return ids
}

// restoreRunFiles rewrites every artifact file of run id that is missing or
// does not hold the attempt's current artifact, and returns their paths.
func (db *DB) restoreRunFiles(id engine.RunID) ([]string, error) {
	type want struct {
		path string
		body []byte
	}
	var wants []want
	err := db.view(func(tx *bbolt.Tx) error {
		arts := tx.Bucket(bucketArtifacts).Bucket([]byte(id))
		if arts == nil || tx.Bucket(bucketRuns).Get([]byte(id)) == nil {
			return nil
		}
		run, err := loadTx(tx, id)
		if err != nil {
			return err
		}
		for _, st := range run.Steps {
			for _, a := range st.Attempts {
				if a.File == "" || !a.Artifact || checkPath(a.File) != nil {
					continue
				}
				if body := currentArtifact(arts, st.N, a.N); body != nil {
					wants = append(wants, want{a.File, bytes.Clone(body)})
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var rewritten []string
	for _, w := range wants {
		if got, err := db.files.root.ReadFile(w.path); err == nil && bytes.Equal(got, w.body) {
			continue
		}
		if err := db.files.write(w.path, w.body); err != nil {
			return rewritten, fmt.Errorf("file %s: %w", w.path, err)
		}
		rewritten = append(rewritten, w.path)
	}
	return rewritten, nil
}

// currentArtifact is the last version of an attempt's artifact in a run's
// artifacts bucket, nil when none is stored; valid only in the transaction.
func currentArtifact(arts *bbolt.Bucket, step, attempt int) []byte {
	prefix := artPrefix(step, attempt)
	var body []byte
	c := arts.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		body = v
	}
	return body
}

// readPending decodes a pending file record, copying its body out of the
// transaction.
func readPending(arts *bbolt.Bucket, k, v []byte) (pendingFile, error) {
	var rec fileRecord
	body, err := unframe(v, &rec)
	if err != nil {
		return pendingFile{}, err
	}
	if err := record.CheckVersion(rec.V); err != nil {
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
