package datadir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// Check refuses a data directory, or its agents/ folder, that users other
// than this one may write: whoever can write there can change the record,
// or plant agent records naming processes for gonogo to kill. A directory
// that is not there yet is created for this user alone.
func Check(data string) error {
	if err := checkPrivate("data directory", data); err != nil {
		return err
	}
	return checkPrivate("agents folder", AgentsDir(data))
}

// checkPrivate refuses dir when a user other than this one (and root) owns
// it or may write it.
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
		return fmt.Errorf("the %s %s belongs to another user (uid %d, you are uid %d), who may change what gonogo records and acts on there: use a directory of your own (--data DIR), or make it yours (chown %d %s)",
			what, dir, sys.Uid, me, me, dir)
	}
	if perm := st.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("the %s %s may be written by other users (mode %s), who could change what gonogo records and acts on there: make it writable by you alone (chmod go-w %s), or use another --data directory",
			what, dir, perm, dir)
	}
	return nil
}
