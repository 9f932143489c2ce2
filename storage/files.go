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

// pendingFile is one file write of a commit, or one recorded by a commit.
type pendingFile struct {
	id         uint64 // its record; 0 for a write the store can derive (see putFiles)
	run        engine.RunID
	path, from string
	body       []byte
	staged     staged // the body written ahead, when it was (see commitStaging)
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
// is the truth. The commit marks its run (see markKey) and the mark stays
// until an fsync has made the run's files durable: once they are syncAfter
// old (by then the kernel has usually written them, and the fsync costs
// next to nothing), when syncBatch files wait, or when the store is
// closed. Until then a crash may lose or cut short a file, and the next
// open writes the marked runs' files again from the store; the batch
// bounds what that open checks.
const (
	syncBatch = 256
	syncAfter = 30 * time.Second
)

// writtenFile is a file write carried out and not yet synced.
type writtenFile struct {
	path string
	at   time.Time
	id   uint64 // its record, when it has one (see putFiles); 0 when not
}

// markKey is the key, in the top-level artifacts bucket, that marks run id
// as having artifact files not yet known durable. It sorts right after the
// run's own artifacts bucket, so it lands on the page holding that
// bucket's header, which the commit storing the artifact writes anyway:
// the mark costs no page of its own. Run ids hold no NUL, so it cannot be
// taken for a run.
func markKey(id engine.RunID) []byte { return append([]byte(id), 0) }

// keyMarked, in the meta bucket, says that some run may be marked, so
// that an open finding it absent need not look through every run's key.
// The meta bucket is small enough for bbolt to keep inside the page of
// bucket headers every transaction writes: it too costs no page.
var keyMarked = []byte("marked")

// markedRun is the run a key of the artifacts bucket marks, "" when the
// key is a run's own bucket.
func markedRun(k []byte) engine.RunID {
	if n := len(k); n > 1 && k[n-1] == 0 {
		return engine.RunID(k[:n-1])
	}
	return ""
}

// writeFilesLocked carries out a commit's file writes in order. It stops
// at the first failure, since a later write may take the place of an
// earlier rename; the run then stays marked (and its records kept) for
// restoreLocked. The caller holds fileMu.
func (db *DB) writeFilesLocked(id engine.RunID, files []pendingFile) error {
	var ferr error
	now := db.now()
	for i, f := range files {
		if err := db.perform(f); err != nil {
			ferr = fmt.Errorf("run %s: file %s: %w", id, f.path, err)
			db.behind.Store(true)
			delete(db.written, id)
			for _, rest := range files[i+1:] {
				if rest.staged.tmp != "" {
					db.files.drop(rest.staged)
				}
			}
			break
		}
		db.addWritten(id, writtenFile{path: f.path, at: now, id: f.id})
	}
	// A failed sync costs this commit nothing: its files are written,
	// their marks stay, and a later sync, Close (which reports it) or
	// the next open makes them durable.
	_ = db.syncFiles(db.due(now))
	return ferr
}

// writtenBounds bounds the written files: at most n+added of them, none
// written before oldest (zero when none is). Syncing or forgetting files
// leaves them true, so only addWritten need keep them; due walks every
// run to count again only once they allow something to be due, so that a
// commit does not walk up to syncBatch unsynced files to find none due.
type writtenBounds struct {
	n, added int
	oldest   time.Time
	walks    int // how many times due walked every run, so tests can bound it
}

// addWritten records a file write carried out and not yet synced.
func (db *DB) addWritten(id engine.RunID, w writtenFile) {
	db.written[id] = append(db.written[id], w)
	b := &db.since
	b.added++
	if b.oldest.IsZero() || w.at.Before(b.oldest) {
		b.oldest = w.at
	}
}

// due is, by run, how many of its written files to sync now: those
// syncAfter old, or all of them once syncBatch wait.
func (db *DB) due(now time.Time) map[engine.RunID]int {
	if b := db.since; b.n+b.added < syncBatch && (b.oldest.IsZero() || now.Sub(b.oldest) < syncAfter) {
		return nil
	}
	n := 0
	var oldest time.Time
	for _, ws := range db.written {
		n += len(ws)
		if len(ws) > 0 && (oldest.IsZero() || ws[0].at.Before(oldest)) {
			oldest = ws[0].at
		}
	}
	db.since = writtenBounds{n: n, oldest: oldest, walks: db.since.walks + 1}
	out := map[engine.RunID]int{}
	for id, ws := range db.written {
		k := len(ws)
		if n < syncBatch {
			// Written in order: the old ones come first.
			k = 0
			for k < len(ws) && now.Sub(ws[k].at) >= syncAfter {
				k++
			}
		}
		if k > 0 {
			out[id] = k
		}
	}
	return out
}

// unsynced is, by run, every written file not yet synced.
func (db *DB) unsynced() map[engine.RunID]int {
	out := map[engine.RunID]int{}
	for id, ws := range db.written {
		out[id] = len(ws)
	}
	return out
}

// syncFiles makes the first n written files of each run in runs, and the
// files also, durable, then forgets their records, and the marks of the
// runs left with nothing to sync, in one transaction. When it fails, the
// marks and records stay: the next open writes the files again. The
// caller holds fileMu.
func (db *DB) syncFiles(runs map[engine.RunID]int, also ...string) error {
	if len(runs) == 0 && len(also) == 0 {
		return nil
	}
	paths := also
	for id, n := range runs {
		for _, w := range db.written[id][:n] {
			paths = append(paths, w.path)
		}
	}
	if err := db.files.sync(paths); err != nil {
		return fmt.Errorf("sync artifact files: %w", err)
	}
	err := db.update(func(tx *bbolt.Tx) error { return db.forgetSynced(tx, runs) })
	if err != nil {
		return fmt.Errorf("forget written files: %w", err)
	}
	for id, n := range runs {
		if rest := db.written[id][n:]; len(rest) > 0 {
			db.written[id] = slices.Clone(rest)
		} else {
			delete(db.written, id)
		}
	}
	return nil
}

// forgetSynced deletes, once their files are synced, the records of the
// first n written files of each run in runs, and the marks of the runs
// left with nothing to sync.
func (db *DB) forgetSynced(tx *bbolt.Tx, runs map[engine.RunID]int) error {
	// Every mark goes once every run written is synced, unless a run's
	// writes failed (behind): its mark stays for restoreLocked.
	last := !db.behind.Load()
	for id, ws := range db.written {
		last = last && runs[id] == len(ws)
	}
	if last {
		if err := tx.Bucket(bucketMeta).Delete(keyMarked); err != nil {
			return err
		}
	}
	files, arts := tx.Bucket(bucketFiles), tx.Bucket(bucketArtifacts)
	for id, n := range runs {
		for _, w := range db.written[id][:n] {
			if w.id == 0 {
				continue
			}
			if err := files.Delete(seqKey(w.id)); err != nil {
				return err
			}
		}
		if n == len(db.written[id]) {
			if err := arts.Delete(markKey(id)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (db *DB) perform(f pendingFile) error {
	if f.staged.tmp != "" {
		return db.files.place(f.staged)
	}
	if f.from != "" {
		return db.files.rename(f.from, f.path)
	}
	return db.files.write(f.path, f.body)
}

// restoreFiles brings the artifact files up to date with the store when
// it is opened (see restoreLocked), and syncs them.
func (db *DB) restoreFiles() error {
	db.fileMu.Lock()
	defer db.fileMu.Unlock()
	failed, err := db.restoreLocked()
	if err != nil {
		return err
	}
	if len(db.written) > 0 {
		db.files.ahead.refill()
	}
	if err := db.syncFiles(db.unsynced()); err != nil {
		return err
	}
	var errs []error
	for _, id := range slices.Sorted(maps.Keys(failed)) {
		errs = append(errs, fmt.Errorf("write pending files: run %s: %w", id, failed[id]))
	}
	return errors.Join(errs...)
}

// restoreLocked carries out what earlier file writes left undone: a
// failure, or a crash, since the writes carried out without an fsync of
// their own may be lost or cut short. It carries out again, in commit
// order, the recorded writes not carried out by this process, then
// rewrites from the store every artifact file, missing or different from
// its artifact (a replayed rename cannot tell), of their runs and of the
// marked runs this process wrote nothing for; they are synced as written
// files are. A run whose files cannot all be written stays as it was
// (marked, its records kept), and the others are done all the same: each
// run's files are its own. It returns why, by run. The caller holds
// fileMu.
func (db *DB) restoreLocked() (map[engine.RunID]error, error) {
	pending, marked, err := db.pendingFiles()
	if err != nil {
		return nil, err
	}
	now := db.now()
	failed := map[engine.RunID]error{}
	for _, f := range pending {
		if failed[f.run] != nil {
			continue // a later write may take the place of an earlier rename
		}
		if err := db.perform(f); err != nil {
			failed[f.run] = fmt.Errorf("file %s: %w", f.path, err)
			continue
		}
		db.addWritten(f.run, writtenFile{path: f.path, at: now, id: f.id})
	}
	for _, id := range runsOf(pending, marked) {
		if failed[id] != nil {
			continue
		}
		paths, err := db.restoreRunFiles(id)
		// Even with no file left to write, the run counts as written, so
		// that the next sync forgets its mark.
		if db.written[id] == nil {
			db.written[id] = []writtenFile{}
		}
		for _, p := range paths {
			db.addWritten(id, writtenFile{path: p, at: now})
		}
		if err != nil {
			failed[id] = fmt.Errorf("rewrite its files: %w", err)
		}
	}
	for id := range failed {
		delete(db.written, id)
	}
	db.behind.Store(len(failed) > 0)
	return failed, nil
}

// pendingFiles reads, in commit order, the records of file writes not
// carried out by this process, and the runs marked for which this process
// wrote nothing. The caller holds fileMu.
func (db *DB) pendingFiles() ([]pendingFile, []engine.RunID, error) {
	done := map[uint64]bool{}
	for _, ws := range db.written {
		for _, w := range ws {
			if w.id != 0 {
				done[w.id] = true
			}
		}
	}
	var pending []pendingFile
	var marked []engine.RunID
	err := db.view(func(tx *bbolt.Tx) error {
		arts := tx.Bucket(bucketArtifacts)
		err := tx.Bucket(bucketFiles).ForEach(func(k, v []byte) error {
			if len(k) == 8 && done[seqNum(k)] {
				return nil
			}
			f, err := readPending(arts, k, v)
			if err != nil {
				return fmt.Errorf("pending file %x: %w", k, err)
			}
			pending = append(pending, f)
			return nil
		})
		if err != nil || tx.Bucket(bucketMeta).Get(keyMarked) == nil {
			return err
		}
		return arts.ForEach(func(k, _ []byte) error {
			if id := markedRun(k); id != "" && db.written[id] == nil {
				marked = append(marked, id)
			}
			return nil
		})
	})
	return pending, marked, err
}

// runsOf is the runs of files, then those of marked not among them.
func runsOf(files []pendingFile, marked []engine.RunID) []engine.RunID {
	var ids []engine.RunID
	for _, f := range files {
		if !slices.Contains(ids, f.run) {
			ids = append(ids, f.run)
		}
	}
	for _, id := range marked {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// restoreRunFiles rewrites every artifact file of run id that is missing or
// does not hold the attempt's current artifact, and returns the paths of
// all its artifact files: those it found right may be right only in the
// kernel's cache, after a crash of gonogo alone, so they are synced too.
func (db *DB) restoreRunFiles(id engine.RunID) ([]string, error) {
	var wants []wantedFile
	err := db.view(func(tx *bbolt.Tx) error {
		var err error
		wants, err = wantedFiles(tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, w := range wants {
		if got, err := db.files.root.ReadFile(w.path); err != nil || !bytes.Equal(got, w.body) {
			if err := db.files.write(w.path, w.body); err != nil {
				return paths, fmt.Errorf("file %s: %w", w.path, err)
			}
		}
		paths = append(paths, w.path)
	}
	return paths, nil
}

// wantedFile is an artifact file as the store says it should read.
type wantedFile struct {
	path string
	body []byte
}

// wantedFiles is every artifact file of run id with the current artifact
// of its attempt, copied out of tx; none when the run or its artifacts are
// not stored.
func wantedFiles(tx *bbolt.Tx, id engine.RunID) ([]wantedFile, error) {
	arts := tx.Bucket(bucketArtifacts).Bucket([]byte(id))
	if arts == nil || tx.Bucket(bucketRuns).Get([]byte(id)) == nil {
		return nil, nil
	}
	run, err := loadTx(tx, id)
	if err != nil {
		return nil, err
	}
	var wants []wantedFile
	for _, p := range engine.ArtifactPlaces(run) {
		if checkPath(p.Path) != nil {
			continue
		}
		if body := currentArtifact(arts, p.Step, p.Attempt); body != nil {
			wants = append(wants, wantedFile{p.Path, bytes.Clone(body)})
		}
	}
	return wants, nil
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
