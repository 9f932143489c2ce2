package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// runsDir is where a commit's artifact files go, one folder per run
// (engine.ArtifactFile).
const runsDir = "runs"

// Missing reports whether dataDir holds no store (no gonogo.db), for a
// reader that creates nothing. A gonogo.db missing while runs/ holds runs
// is no missing store but a lost one: an error saying so and what to do.
func Missing(dataDir string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dataDir, FileName)); !errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return true, checkNotReplacing(dataDir, true)
}

// checkNotReplacing refuses to open the store when gonogo.db is missing or
// empty (bbolt would make a new database of it) while runs/ holds the
// folders of runs: those runs were recorded in a database that is gone,
// and a new one would silently start a second record beside them. Opened
// read-only, an empty file is no database at all.
func checkNotReplacing(dataDir string, readOnly bool) error {
	path := filepath.Join(dataDir, FileName)
	st, err := os.Stat(path)
	var found string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		found = "is missing"
	case err != nil || st.Size() > 0:
		return nil // open says what is wrong with it, if anything
	default:
		found = "is empty (0 bytes)"
	}
	n := runsOnDisk(dataDir)
	switch {
	case n == 0 && readOnly && st != nil:
		return fmt.Errorf("open %s: the file is empty (0 bytes): %w", path, ErrDamaged)
	case n == 0:
		return nil
	}
	return &lostStore{fmt.Sprintf("open %s: the file %s, but %s holds the files of %s: the database that recorded them is lost; %s",
		path, found, filepath.Join(dataDir, runsDir), plural(n, "run"), advice(dataDir))}
}

// lostStore is a store whose database is gone while its runs' files are
// still there: damaged, in words of its own.
type lostStore struct{ msg string }

func (l *lostStore) Error() string { return l.msg }
func (l *lostStore) Unwrap() error { return ErrDamaged }

// damagedAdvice adds to an error about a damaged store what to do about it.
func damagedAdvice(dataDir string, err error) error {
	if !errors.Is(err, ErrDamaged) {
		return err
	}
	msg := advice(dataDir)
	if n := runsOnDisk(dataDir); n > 0 {
		msg += fmt.Sprintf(" (%s holds the files of %s)", filepath.Join(dataDir, runsDir), plural(n, "run"))
	}
	return fmt.Errorf("%w; %s", err, msg)
}

func advice(dataDir string) string {
	return fmt.Sprintf("gonogo will not start a new store in its place: restore %s from a backup, or move the data directory %s aside and start afresh",
		FileName, dataDir)
}

// runsOnDisk counts the run folders under the data directory's runs/ that
// a gonogo.db recorded: not those of runs kept on a cluster.
func runsOnDisk(dataDir string) int {
	entries, err := os.ReadDir(filepath.Join(dataDir, runsDir))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() && !onCluster(filepath.Join(dataDir, runsDir, e.Name())) {
			n++
		}
	}
	return n
}

// onCluster reports whether a run's folder holds the files of a run kept
// on a cluster (ClusterMark), which no gonogo.db recorded.
func onCluster(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ClusterMark))
	return err == nil
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
