package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/storage"
)

// lockWait is how long doctor waits for the store's lock: a gonogo
// holding it is reported, never waited out.
const lockWait = 300 * time.Millisecond

// checkData looks at the data directory without creating anything in it:
// a missing directory or database is reported, not made.
func checkData(ctx context.Context, cfg Config) Data {
	dir := cfg.DataDir
	d := Data{Dir: dir, Runs: map[string]int{}}
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		// Missing, or a part of its path is no folder: the first run
		// creates it, if it can.
		d.Store = "none"
		d.Writable, d.NotWritable = canCreate(dir)
		return d
	case !fi.IsDir():
		d.Exists = true
		d.Store, d.StoreError = "error", "not a directory"
		d.NotWritable = "it is a file, not a directory"
		return d
	}
	d.Exists = true
	d.Writable, d.NotWritable = canWrite(dir)
	if _, err := os.Stat(filepath.Join(dir, storage.FileName)); errors.Is(err, fs.ErrNotExist) {
		d.Store = "none"
		return d
	}
	if cfg.CheckDataDir != nil {
		if err := cfg.CheckDataDir(dir); err != nil {
			d.Store, d.StoreError = "error", err.Error()
			return d
		}
	}
	d.Store, d.StoreError = readStore(ctx, cfg, d.Runs)
	return d
}

// readStore opens the store in cfg.DataDir and counts its runs by state
// into runs; it says how the store stands, and why when it does not open.
func readStore(ctx context.Context, cfg Config, runs map[string]int) (store, why string) {
	db, err := storage.Open(cfg.DataDir, storage.Options{LockTimeout: lockWait})
	switch {
	case errors.Is(err, engine.ErrLocked):
		return "held", ""
	case err != nil:
		return "error", err.Error()
	}
	defer db.Close()
	if cfg.ReapAgents != nil {
		cfg.ReapAgents(cfg.DataDir)
	}
	list, err := db.List(ctx)
	if err != nil {
		return "error", err.Error()
	}
	for _, s := range list {
		runs[string(s.State)]++
	}
	return "ok", ""
}

// canWrite reports whether gonogo can write in the folder dir, by writing
// there: a probe file, removed at once. Permission bits alone do not say
// it (root, a read-only mount, a full disk).
func canWrite(dir string) (bool, string) {
	tmp, err := os.CreateTemp(dir, ".gonogo-doctor-*")
	if err != nil {
		return false, localapi.RootCause(err).Error()
	}
	tmp.Close()
	os.Remove(tmp.Name())
	return true, ""
}

// canCreate reports whether the missing folder dir can be created: the
// nearest part of its path that exists must be a folder gonogo can write
// in. A path through a file (a typo in GONOGO_DATA_DIR naming a file as a
// folder) cannot be created, not even by root.
func canCreate(dir string) (bool, string) {
	p := filepath.Clean(dir)
	for {
		fi, err := os.Stat(p)
		if err == nil {
			return canCreateIn(p, fi)
		}
		up := filepath.Dir(p)
		if up == p {
			return false, fmt.Sprintf("it cannot be created: %v", err)
		}
		p = up
	}
}

// canCreateIn reports whether a missing folder can be created under p, the
// nearest part of its path that exists (fi).
func canCreateIn(p string, fi fs.FileInfo) (bool, string) {
	if !fi.IsDir() {
		return false, fmt.Sprintf("it cannot be created: %s is a file, not a directory", p)
	}
	if ok, why := canWrite(p); !ok {
		return false, fmt.Sprintf("it cannot be created in %s: %s", p, why)
	}
	return true, ""
}
