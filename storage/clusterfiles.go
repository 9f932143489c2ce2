package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync/atomic"

	"github.com/gonogo/gonogo/engine"
)

// ClusterMark is the file in the folder of a run kept on a Temporal
// cluster (runs/<run>/.cluster) that says so: its artifact files there are
// copies of the cluster's, written by the gonogo that followed the run on
// this machine, and no gonogo.db recorded them. A gonogo.db missing while
// runs/ holds only such folders is no lost store.
const ClusterMark = ".cluster"

// RunFiles writes the artifact files of one run kept on a cluster under a
// data directory, at the names a run on bbolt has its own
// (engine.ArtifactPlaces) and as the store writes those: a reader sees a
// file's old body or its new one, never part of one, and no name leaves
// runs/<run>/. Nothing is fsynced: the cluster's artifact store is the
// truth, and a file a power cut lost is written again the next time the
// run is followed. A RunFiles is for one goroutine.
type RunFiles struct {
	d     dataFiles
	id    engine.RunID
	where string // what the mark says holds the run
	// marked says the run's folder has its ClusterMark.
	marked bool
}

// OpenRunFiles returns the writer of run id's files under dataDir, made
// if missing; where names the cluster that holds the run, for the mark.
func OpenRunFiles(dataDir string, id engine.RunID, where string) (*RunFiles, error) {
	if !id.WellFormed() {
		return nil, fmt.Errorf("run id %q is not one gonogo makes", id)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	root, err := os.OpenRoot(dataDir)
	if err != nil {
		return nil, err
	}
	return &RunFiles{d: dataFiles{root: root, noSync: true, syncs: new(atomic.Int64), dirs: map[string]bool{}},
		id: id, where: where}, nil
}

// check refuses a path outside the run's folder, or the mark itself.
func (f *RunFiles) check(p string) error {
	if err := checkPath(p); err != nil {
		return fmt.Errorf("file %q: %w", p, err)
	}
	dir := path.Join(runsDir, string(f.id)) + "/"
	if !strings.HasPrefix(p, dir) || p == dir+ClusterMark {
		return fmt.Errorf("file %q is not an artifact file of run %s", p, f.id)
	}
	return nil
}

// Write makes p hold body, unless it holds it already.
func (f *RunFiles) Write(p string, body []byte) error {
	if err := f.check(p); err != nil {
		return err
	}
	if got, err := f.d.root.ReadFile(p); err == nil && bytes.Equal(got, body) {
		return nil
	}
	if !f.marked {
		mark := path.Join(runsDir, string(f.id), ClusterMark)
		if err := f.d.write(mark, []byte("The artifact files of run "+string(f.id)+", kept on "+f.where+": copies, written as the run was followed here.\n")); err != nil {
			return fmt.Errorf("file %s: %w", mark, err)
		}
		f.marked = true
	}
	if err := f.d.write(p, body); err != nil {
		return fmt.Errorf("file %s: %w", p, err)
	}
	return nil
}

// Remove removes p; a p already gone is no error.
func (f *RunFiles) Remove(p string) error {
	if err := f.check(p); err != nil {
		return err
	}
	if err := f.d.root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("file %s: %w", p, err)
	}
	return nil
}

// Close releases the data directory.
func (f *RunFiles) Close() error { return f.d.root.Close() }
