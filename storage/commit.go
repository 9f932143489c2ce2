package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// prepared is a Commit checked and encoded before its transaction begins,
// so the transaction itself only reads and puts bytes.
type prepared struct {
	id      []byte
	run     engine.RunID
	after   uint64
	key     string
	keyRec  []byte
	seqs    [][]byte
	events  [][]byte
	snap    []byte
	plan    []byte // set when the commit starts the run
	summary []byte
	active  bool
	running bool
	arts    []engine.ArtifactWrite
	files   []engine.FileWrite
	derived []bool // by file: the store can write it again from the run and its artifacts
}

// Commit applies c in one fsynced transaction: the journal events, the
// snapshot, the artifacts, the idempotency key and what the store keeps of
// the file writes until they are durable (its run's mark, and the records
// of those it could not derive); then puts the files in place, their
// bodies written meanwhile (see commitStaging): they are on disk when it
// returns, and a later sync makes them durable (see the package doc's
// Durability). It refuses, writing nothing, a change computed against
// an older journal (engine.ErrStale), a key already applied
// (engine.ErrDuplicate) and events that do not continue the journal.
//
// The run's Plan is stored with its first commit only (After 0): a run's
// plan never changes once it has started. Commit keeps none of c's slices
// after it returns, but they must not change while it runs.
//
// When the transaction committed but a file could not be written, Commit
// returns an error wrapping ErrFilesPending: the change stands, and the file
// is written the next time the store is opened.
func (db *DB) Commit(ctx context.Context, c engine.Commit) error {
	if err := live(ctx); err != nil {
		return err
	}
	if err := db.mayWrite(); err != nil {
		return err
	}
	p, err := encodeCommit(c)
	if err != nil {
		return err
	}
	if len(p.files) > 0 {
		return db.commitWithFiles(c.Run, p)
	}
	err = db.update(func(tx *bbolt.Tx) (err error) {
		_, err = commitTx(tx, p)
		return err
	})
	if err != nil {
		return err
	}
	db.remember(c.Run)
	return nil
}

// commitWithFiles commits p and carries out its file writes, their bodies
// written while the transaction commits (see commitStaging).
func (db *DB) commitWithFiles(run *engine.Run, p *prepared) error {
	db.fileMu.Lock()
	defer db.fileMu.Unlock()
	fileIDs, stagedFiles, err := db.commitStaging(p)
	if err != nil {
		return err
	}
	db.remember(run)
	// What the files took from ahead is made again once they are written.
	defer db.files.ahead.refill()
	if db.behind.Load() {
		// Earlier writes failed: carry out every one pending, in commit
		// order, and rewrite their runs' files from the store, this
		// commit's included (its run counts as not written yet, so its
		// mark is followed).
		delete(db.written, p.run)
		failed, err := db.restoreLocked()
		if err == nil {
			err = failed[p.run]
		}
		_ = db.syncFiles(db.due(db.now())) // as writeFilesLocked does
		if err != nil {
			return fmt.Errorf("commit run %s: %w: %w", p.run, ErrFilesPending, err)
		}
		return nil
	}
	pending := make([]pendingFile, len(p.files))
	for i, f := range p.files {
		pending[i] = pendingFile{id: fileIDs[i], run: p.run, path: f.Path, from: f.From, body: f.Body, staged: stagedFiles[i]}
	}
	if err := db.writeFilesLocked(p.run, pending); err != nil {
		return fmt.Errorf("commit run %s: %w: %w", p.run, ErrFilesPending, err)
	}
	return nil
}

// commitStaging runs p's transaction while a goroutine stages the bodies
// of its file writes in what was made ahead: the transaction's fsync is
// most of its time, and the writes fit in it, leaving a rename for after.
// It returns the records' ids and what was staged, by file (the zero
// staged for a file written after as if there were no ahead). A failed
// transaction drops what was staged. Nothing is staged when earlier
// writes failed (behind): then the files are written from the store.
// The caller holds fileMu.
func (db *DB) commitStaging(p *prepared) ([]uint64, []staged, error) {
	stagedFiles := make([]staged, len(p.files))
	done := make(chan struct{})
	if db.behind.Load() {
		close(done)
	} else {
		go func() {
			defer close(done)
			for i, f := range p.files {
				if f.From != "" {
					continue // a rename is carried out after, in order
				}
				// A file that cannot be staged is written after, and
				// its error reported then.
				if s, ok, err := db.files.stage(f.Path, f.Body); ok && err == nil {
					stagedFiles[i] = s
				}
			}
		}()
	}
	var fileIDs []uint64
	err := db.update(func(tx *bbolt.Tx) (err error) {
		fileIDs, err = commitTx(tx, p)
		return err
	})
	<-done
	if err != nil {
		took := false
		for _, s := range stagedFiles {
			if s.tmp != "" {
				db.files.drop(s)
				took = true
			}
		}
		if took {
			db.files.ahead.refill()
		}
		return nil, nil, err
	}
	return fileIDs, stagedFiles, nil
}

// encodeCommit checks c and encodes its records.
func encodeCommit(c engine.Commit) (*prepared, error) {
	r := c.Run
	if r == nil || r.ID == "" {
		return nil, errors.New("commit: no run")
	}
	if err := checkCommit(c); err != nil {
		return nil, fmt.Errorf("commit run %s: %w", r.ID, err)
	}
	p := &prepared{
		id: []byte(r.ID), run: r.ID, after: c.After, key: c.Key, arts: c.Artifacts, files: c.Files,
		active: !r.Finished(), running: hasRunning(r), derived: derivable(c),
	}
	if err := p.encodeEvents(c); err != nil {
		return nil, fmt.Errorf("commit run %s: %w", r.ID, err)
	}
	if err := p.encodeRecords(c); err != nil {
		return nil, fmt.Errorf("commit run %s: %w", r.ID, err)
	}
	return p, nil
}

// checkCommit refuses a commit this store could not keep or read back.
func checkCommit(c engine.Commit) error {
	r := c.Run
	if len(c.Events) == 0 {
		return errors.New("no events: every change to a run is a journal event")
	}
	if err := checkStates(r); err != nil {
		return err
	}
	for i, ev := range c.Events {
		if want := c.After + uint64(i) + 1; ev.Seq != want {
			return fmt.Errorf("event %d (%s) has seq %d, want %d: events must continue the journal without gaps",
				i+1, ev.Type, ev.Seq, want)
		}
		if _, err := engine.ParseEventType(string(ev.Type)); err != nil {
			return fmt.Errorf("event %d: %w", ev.Seq, err)
		}
		if ev.Start != nil && ev.Start.ID != r.ID {
			return fmt.Errorf("event %d starts run %s", ev.Seq, ev.Start.ID)
		}
	}
	if last := c.Events[len(c.Events)-1].Seq; r.Seq != last {
		return fmt.Errorf("the run is at seq %d but the last event is %d", r.Seq, last)
	}
	if len(c.Key) > bbolt.MaxKeySize {
		return fmt.Errorf("idempotency key of %d bytes is too long", len(c.Key))
	}
	for _, a := range c.Artifacts {
		if a.Step < 1 || a.Step > len(r.Steps) || a.Attempt < 1 {
			return fmt.Errorf("artifact for step %d attempt %d: no such step attempt", a.Step, a.Attempt)
		}
	}
	for _, f := range c.Files {
		if err := checkFileWrite(f); err != nil {
			return err
		}
	}
	return nil
}

// encodeEvents encodes the commit's journal events.
func (p *prepared) encodeEvents(c engine.Commit) error {
	var stored *engine.Plan
	if c.After == 0 {
		stored = &c.Run.Plan // written with this commit, by encodeRecords
	}
	for _, ev := range c.Events {
		b, err := record.EncodeEvent(ev, stored)
		if err != nil {
			return fmt.Errorf("encode event %d: %w", ev.Seq, err)
		}
		p.seqs = append(p.seqs, seqKey(ev.Seq))
		p.events = append(p.events, b)
	}
	return nil
}

// encodeRecords encodes the run's snapshot, summary, plan and key record.
func (p *prepared) encodeRecords(c engine.Commit) error {
	r := c.Run
	var err error
	if p.snap, err = record.EncodeRun(r); err != nil {
		return fmt.Errorf("encode snapshot: %w", err)
	}
	if p.summary, err = record.EncodeSummary(r); err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	// The plan is the run's own copy and never changes once the run has
	// started, so it is written with the run's first change only.
	if c.After == 0 {
		if p.plan, err = record.EncodePlan(r.Plan); err != nil {
			return fmt.Errorf("encode plan: %w", err)
		}
	}
	if c.Key != "" {
		if p.keyRec, err = json.Marshal(keyRecord{V: record.Version, Run: string(r.ID), Seq: r.Seq}); err != nil {
			return err
		}
	}
	return nil
}

// checkStates refuses a run whose typed states this store could not read
// back: better to refuse the change than to keep a run no one can load.
func checkStates(r *engine.Run) error {
	if _, err := engine.ParseRunState(string(r.State)); err != nil {
		return err
	}
	if _, err := engine.ParseMode(string(r.Mode)); err != nil {
		return err
	}
	for i := range r.Steps {
		if _, err := engine.ParseStepStatus(string(r.Steps[i].Status)); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	return nil
}

func hasRunning(r *engine.Run) bool {
	for i := range r.Steps {
		if r.Steps[i].Status == engine.StepRunning {
			return true
		}
	}
	return false
}

// commitTx writes a prepared commit in tx after checking it against what is
// stored. It returns the ids of the pending file writes it recorded.
func commitTx(tx *bbolt.Tx, p *prepared) ([]uint64, error) {
	journal, err := checkJournal(tx, p)
	if err != nil {
		return nil, err
	}
	if err := putKey(tx, p); err != nil {
		return nil, err
	}
	if err := putRun(tx, journal, p); err != nil {
		return nil, err
	}
	versions, err := putArtifacts(tx, p)
	if err != nil {
		return nil, err
	}
	return putFiles(tx, p, versions)
}

// checkJournal returns the run's journal once the commit is known to follow
// its last event: a change made on an older state is stale.
func checkJournal(tx *bbolt.Tx, p *prepared) (*bbolt.Bucket, error) {
	exists := tx.Bucket(bucketRuns).Get(p.id) != nil
	journal, err := tx.Bucket(bucketJournal).CreateBucketIfNotExists(p.id)
	if err != nil {
		return nil, fmt.Errorf("run %s: journal: %w", p.run, err)
	}
	// The journal's append-only keys pack best into full pages.
	journal.FillPercent = 1
	var last uint64
	if k, _ := journal.Cursor().Last(); k != nil {
		last = binary.BigEndian.Uint64(k)
	}
	switch {
	case !exists && p.after != 0:
		return nil, fmt.Errorf("run %s is not in the store, but the change follows its event %d: %w: %w",
			p.run, p.after, engine.ErrStale, engine.ErrNotFound)
	case exists && p.after == 0:
		return nil, fmt.Errorf("run %s already exists: %w", p.run, engine.ErrStale)
	case last != p.after:
		return nil, fmt.Errorf("run %s is at event %d, the change was made at event %d: %w", p.run, last, p.after, engine.ErrStale)
	}
	return journal, nil
}

// putKey records the commit's idempotency key, refusing one already applied.
func putKey(tx *bbolt.Tx, p *prepared) error {
	if p.key == "" {
		return nil
	}
	keys := tx.Bucket(bucketKeys)
	if v := keys.Get([]byte(p.key)); v != nil {
		var k keyRecord
		where := ""
		if json.Unmarshal(v, &k) == nil {
			where = fmt.Sprintf(" to run %s at event %d", k.Run, k.Seq)
		}
		return fmt.Errorf("run %s: key %q was already applied%s: %w", p.run, p.key, where, engine.ErrDuplicate)
	}
	return keys.Put([]byte(p.key), p.keyRec)
}

// putRun appends the events and writes the snapshot, summary, plan and
// indexes. The summary and the running mark go next to the snapshot (see
// summaryKey), on the page it is written on.
func putRun(tx *bbolt.Tx, journal *bbolt.Bucket, p *prepared) error {
	for i := range p.events {
		if err := journal.Put(p.seqs[i], p.events[i]); err != nil {
			return fmt.Errorf("run %s: journal: %w", p.run, err)
		}
	}
	if err := tx.Bucket(bucketRuns).Put(p.id, p.snap); err != nil {
		return fmt.Errorf("run %s: snapshot: %w", p.run, err)
	}
	if err := tx.Bucket(bucketRuns).Put(summaryKey(p.id), p.summary); err != nil {
		return fmt.Errorf("run %s: summary: %w", p.run, err)
	}
	if p.plan != nil {
		if err := tx.Bucket(bucketPlans).Put(p.id, p.plan); err != nil {
			return fmt.Errorf("run %s: plan: %w", p.run, err)
		}
	}
	if err := index(tx.Bucket(bucketActive), p.id, p.active); err != nil {
		return err
	}
	return index(tx.Bucket(bucketRuns), runningKey(p.id), p.running)
}

// putArtifacts adds the commit's artifact versions and returns their
// numbers, in the order of p.arts.
func putArtifacts(tx *bbolt.Tx, p *prepared) ([]int, error) {
	versions := make([]int, len(p.arts))
	if len(p.arts) == 0 {
		return versions, nil
	}
	arts, err := tx.Bucket(bucketArtifacts).CreateBucketIfNotExists(p.id)
	if err != nil {
		return nil, fmt.Errorf("run %s: artifacts: %w", p.run, err)
	}
	for i, a := range p.arts {
		if versions[i], err = putArtifact(arts, a); err != nil {
			return nil, fmt.Errorf("run %s: step %d attempt %d artifact: %w", p.run, a.Step, a.Attempt, err)
		}
	}
	return versions, nil
}

// derivable reports, for each of c's files, whether restoreRunFiles would
// write it again as it is: the current artifact of the attempt whose file
// it is, stored by c itself. Renames and other files are not: replaying
// them needs their record.
func derivable(c engine.Commit) []bool {
	out := make([]bool, len(c.Files))
	for i, f := range c.Files {
		if f.From != "" || len(f.Body) == 0 {
			continue
		}
		step, attempt := attemptOfFile(c.Run, f.Path)
		if step == 0 {
			continue
		}
		var current []byte
		for _, a := range c.Artifacts {
			if a.Step == step && a.Attempt == attempt {
				current = a.Body
			}
		}
		out[i] = current != nil && bytes.Equal(current, f.Body)
	}
	return out
}

// attemptOfFile is the step and attempt of r whose artifact file is path,
// 0, 0 when none is.
func attemptOfFile(r *engine.Run, path string) (int, int) {
	for _, st := range r.Steps {
		for _, a := range st.Attempts {
			if a.File == path && a.Artifact {
				return st.N, a.N
			}
		}
	}
	return 0, 0
}

// putFiles marks the run when the store can derive a file of the commit
// (see markKey), and records the others as pending file writes. It
// returns the records' ids, by file, 0 for a derived one.
func putFiles(tx *bbolt.Tx, p *prepared, versions []int) ([]uint64, error) {
	if len(p.files) == 0 {
		return nil, nil
	}
	fileIDs := make([]uint64, len(p.files))
	files := tx.Bucket(bucketFiles)
	files.FillPercent = 1
	marked := false
	for i, f := range p.files {
		if p.derived[i] {
			if !marked {
				if err := mark(tx, p.run); err != nil {
					return nil, fmt.Errorf("run %s: mark its files: %w", p.run, err)
				}
				marked = true
			}
			continue
		}
		rec := fileRecord{V: record.Version, Run: string(p.run), Path: f.Path, From: f.From}
		body := f.Body
		// A file that holds an artifact of this commit refers to it
		// rather than storing its body twice.
		for i, a := range p.arts {
			if f.From == "" && len(f.Body) > 0 && bytes.Equal(a.Body, f.Body) {
				rec.Ref, body = &artRef{Step: a.Step, Attempt: a.Attempt, Version: versions[i]}, nil
				break
			}
		}
		id, err := files.NextSequence()
		if err != nil {
			return nil, err
		}
		v, err := frame(rec, body)
		if err != nil {
			return nil, err
		}
		if err := files.Put(seqKey(id), v); err != nil {
			return nil, fmt.Errorf("run %s: pending file %s: %w", p.run, f.Path, err)
		}
		fileIDs[i] = id
	}
	return fileIDs, nil
}

// mark marks run id's artifact files as not yet known durable (see
// markKey).
func mark(tx *bbolt.Tx, id engine.RunID) error {
	if err := tx.Bucket(bucketMeta).Put(keyMarked, []byte{}); err != nil {
		return err
	}
	return tx.Bucket(bucketArtifacts).Put(markKey(id), []byte{})
}

func index(b *bbolt.Bucket, id []byte, in bool) error {
	if in {
		if b.Get(id) != nil {
			return nil
		}
		return b.Put(id, []byte{})
	}
	return b.Delete(id)
}

// putArtifact adds a version of an attempt's artifact and returns its number
// (1 for the agent's original).
func putArtifact(b *bbolt.Bucket, a engine.ArtifactWrite) (int, error) {
	prefix := artPrefix(a.Step, a.Attempt)
	version := 1
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		version = int(binary.BigEndian.Uint32(k[8:])) + 1
	}
	return version, b.Put(artKey(a.Step, a.Attempt, version), a.Body)
}

func seqKey(n uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), n) }

func seqNum(k []byte) uint64 { return binary.BigEndian.Uint64(k) }

func artPrefix(step, attempt int) []byte {
	k := make([]byte, 8, 12)
	binary.BigEndian.PutUint32(k, uint32(step))
	binary.BigEndian.PutUint32(k[4:], uint32(attempt))
	return k
}

func artKey(step, attempt, version int) []byte {
	return binary.BigEndian.AppendUint32(artPrefix(step, attempt), uint32(version))
}
