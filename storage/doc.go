// Package storage owns gonogo's durable state on one machine: the bbolt
// file <data>/gonogo.db (every run's snapshot, plan, journal and artifact
// versions, the idempotency keys applied, the notes a front end keeps with
// a run, the web pages' sign-in links and sessions (hashed), the schema
// version and its migrations); the artifact files
// written under runs/ once a change is committed; the requests a front end
// acknowledged and has not carried out yet, in <data>/inbox.db (Inbox); and
// the pulse, <data>/gonogo.alive (PulseFile). DB keeps the contract
// engine.Store declares, checked by engine/storetest.
//
// It imports engine, internal/record (whose records are the bytes it keeps
// for runs, plans, summaries and events), bbolt and golang.org/x/sys/unix,
// and nothing else of gonogo. Every bucket and key, what a commit does and
// what Open recovers after a crash, and reading only: docs/durability.md.
// Caveats: the lock is advisory (flock), so it keeps out other gonogo
// processes, not other programs; a damaged file is reported, not repaired.
//
//	db, err := storage.Open(dataDir, storage.Options{})
//	if err != nil {
//		return err // a damaged file, or the store held by another gonogo
//	}
//	defer db.Close()
//	svc := engine.NewService(engine.ServiceConfig{Store: db, Catalog: cat, Runner: r})
package storage
