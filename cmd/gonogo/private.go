package main

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/gonogo/gonogo/storage"
)

// checkDataDir refuses a data directory, or its agents/ folder, that users
// other than this one may write: whoever can write there can change the
// record, or plant agent records naming processes for gonogo to kill. A
// directory that is not there yet is created for this user alone.
func checkDataDir(data string) error {
	if err := checkPrivate("data directory", data); err != nil {
		return err
	}
	return checkPrivate("agents folder", agentsDir(data))
}

// checkPrivate refuses dir when a user other than this one (and root) owns
// it or may write it. A usage error: exit 2.
func checkPrivate(what, dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	me := os.Geteuid()
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != me && sys.Uid != 0 {
		return usagef("the %s %s belongs to another user (uid %d, you are uid %d), who may change what gonogo records and acts on there: use a directory of your own (--data DIR), or make it yours (chown %d %s)",
			what, dir, sys.Uid, me, me, dir)
	}
	if perm := st.Mode().Perm(); perm&0o022 != 0 {
		return usagef("the %s %s may be written by other users (mode %s), who could change what gonogo records and acts on there: make it writable by you alone (chmod go-w %s), or use another --data directory",
			what, dir, perm, dir)
	}
	return nil
}

// openToRead opens the store in data for a command that reads it: for
// writing when this user may write it, brought up to date as every open
// does (and the agents a dead gonogo left stopped), which only a data
// directory of theirs alone may be; read-only, writing nothing, when they
// may only read it (another user's store, a read-only mount).
func openToRead(data string, wait time.Duration) (*storage.DB, error) {
	if storage.Writable(data) {
		if err := checkDataDir(data); err != nil {
			return nil, err
		}
	}
	db, err := storage.OpenToRead(data, storage.Options{LockTimeout: wait})
	if err != nil {
		return nil, err
	}
	if !db.ReadOnly() {
		reapAgents(data, slog.Default())
	}
	return db, nil
}
