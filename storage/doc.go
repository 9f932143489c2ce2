// Package storage owns gonogo's durable state: the bbolt file
// <data>/gonogo.db with every run's snapshot, its append-only journal, the
// artifacts each attempt produced (every version), the idempotency keys
// already applied, the notes a front end keeps with each run (such as the
// Slack messages it posted), the schema version and its migrations; the
// artifact files written under the data directory once a change is
// committed; and, in a file of its own beside the store's
// (<data>/inbox.db, see Inbox), the requests a front end acknowledged and
// has not carried out yet; and its pulse (<data>/gonogo.alive, see
// PulseFile), when the gonogo holding it was last alive while steps ran.
//
// # Layout
//
// Every top-level bucket, and what its keys and values are:
//
//	meta       "schema" -> schema version, 8-byte big-endian;
//	           "marked" -> empty: some run's artifact files may not be known durable (see artifacts)
//	runs       run id -> snapshot record: the run without its plan (JSON)
//	plans      run id -> the run's plan copy (JSON), written with the run's first commit
//	summaries  run id -> summary record (JSON): one line of a listing
//	journal    run id -> nested bucket: seq (8-byte big-endian) -> event record (JSON)
//	artifacts  run id -> nested bucket: step|attempt|version (3 x 4-byte big-endian) -> body;
//	           run id + 0x00 -> empty: the run's artifact files are not yet known durable
//	keys       idempotency key -> key record (JSON): run id and seq of the change it made
//	active     run id -> empty: runs neither completed nor aborted
//	running    run id -> empty: runs with a step whose status is running
//	files      id (8-byte big-endian, bucket sequence) -> file write not yet known durable that
//	           the store could not write again from an artifact (a rename, say) (framed)
//	notes      run id -> notes record (JSON): the run's notes, key -> value
//
// A framed value is a 4-byte big-endian length, a JSON header of that
// length, then the raw body (artifacts run to a megabyte; base64 would add a
// third). A pending file write whose body is an artifact stored by the same
// commit names that artifact's version instead of holding a second copy.
//
// Run ids sort by creation time to the second (the engine makes them
// so), so runs, summaries and active iterate oldest first; List orders
// the summaries by their creation time, which tells apart runs started in
// the same second (engine.NewestFirst). Records are private structs with a version field, kept apart
// from the engine's types so the engine can change without rewriting the
// file; typed states are stored as their text.
//
// A run's snapshot and its run-started event carry the run's setup (how
// its steps are carried out: runner, agent, skills, workflows, policy);
// runs recorded before setups were kept have none and decode with none.
// The same versioned records are the wire form one gonogo hands another
// (MarshalRun, MarshalSummaries), so a reader decodes exactly what Load
// and Journal return, and refuses a record from a newer gonogo.
//
// The plan is stored on its own because it never changes after a run starts
// (the run keeps its own copy) and is the largest part of a run: keeping it
// out of the snapshot keeps every later transition small. For the same
// reason a snapshot's step leaves out the fields it copied from its plan step
// (skill, prompt, ...) when they are unchanged, and the run-started event
// refers to the stored plan instead of repeating it. Load and Journal put
// the pieces back together: what they return equals what was committed.
//
// # Durability
//
// Commit is one read-write transaction, fsynced by bbolt when it commits.
// Files cannot join that transaction, so a commit marks its run (or, for a
// file the store could not write again from the run's artifacts, records
// the write) inside it and writes the files after it; the mark sits beside
// the run's artifacts, on a page the transaction writes anyway. The
// database is the truth and a file only a copy, so a file gets no fsync
// on the commit's path (it would cost more than the transaction): the mark
// stays until the run's files are fsynced, in a batch, once they are 30 s
// old (the kernel has usually written them by then), when 256 wait, or at
// Close. Nor does the commit make the file or its run's folder: a
// goroutine the store owns keeps ready in <data>/.ahead an empty file and
// an empty folder holding one, and the commit writes the body into the
// file and renames them into place (Close removes what is left there, and
// Open what a crash left). If gonogo or the machine stops in between, Open carries
// the recorded writes out again and rewrites, from the store, every
// artifact file of the marked runs that is missing or cut short, before
// anything else. Open then commits,
// through Commit's own path, the change engine.Recover makes of every run
// the file says had a step running (the step interrupted), which is true
// because bbolt's exclusive lock means no other process can still be
// running it, each lost at its last sign of life. The store keeps the
// contract engine.Store declares, checked
// by engine/storetest.
//
// Open refuses to make a new database where gonogo.db is missing, empty or
// damaged while runs/ holds runs' files: their record is lost, and a new
// one beside them would hide that.
//
// # Reading only
//
// Options.ReadOnly (and OpenToRead, for a user who may not write the
// store) opens the file with a shared lock and writes nothing: no
// migration, no pending file, no recovery. A step a dead gonogo left
// running reads as running, as recorded; no gonogo runs it, since none
// holds the lock.
//
// Caveats: the lock is advisory (flock), so it keeps out other gonogo
// processes, not other programs; a damaged file is reported, not repaired.
package storage
