package main

import (
	"context"
	"fmt"
	"io"

	"github.com/gonogo/gonogo/engine"
	settings "github.com/gonogo/gonogo/internal/config"
	"github.com/gonogo/gonogo/internal/temporalbackend"
	"github.com/gonogo/gonogo/storage"
)

// runCopies writes the artifact files of a run followed from this
// terminal on the cluster under the data directory, where a run on bbolt
// has its own (runs/<run>/NN-<skill>.md, earlier attempts by their
// attempt's name): the engine says which files each change of the run
// writes and removes (engine.FileChanges), the cluster's artifact store
// has their bodies. A file that cannot be written is said once on
// stderr; the run goes on, and its artifact is still on the cluster.
type runCopies struct {
	files *storage.RunFiles
	b     *temporalbackend.Backend
	last  *engine.Run // the run as the files stand; nil before the first update
	warn  io.Writer
	// failed says a file could not be written: said once.
	failed bool
}

func openRunCopies(e env, data string, b *temporalbackend.Backend, tc settings.Temporal, id engine.RunID) (*runCopies, error) {
	files, err := storage.OpenRunFiles(data, id, fmt.Sprintf("the Temporal cluster at %s, namespace %s", tc.Addr, tc.Namespace))
	if err != nil {
		return nil, fmt.Errorf("the artifact files of run %s under %s: %w", id, data, err)
	}
	return &runCopies{files: files, b: b, warn: e.stderr}, nil
}

// update makes the files stand as run r says, from where they stood; a
// nil runCopies (the data directory could not be opened) writes nothing.
func (c *runCopies) update(ctx context.Context, r *engine.Run) {
	if c == nil {
		return
	}
	write, remove := engine.FileChanges(c.last, r)
	for _, p := range write {
		body, err := c.b.Artifact(ctx, r.ID, p.Step, p.Attempt)
		if err == nil {
			err = c.files.Write(p.Path, body)
		}
		if err != nil {
			c.fail(r, p.Path, err)
		}
	}
	for _, p := range remove {
		if err := c.files.Remove(p); err != nil {
			c.fail(r, p, err)
		}
	}
	c.last = r.Clone()
}

func (c *runCopies) fail(r *engine.Run, path string, err error) {
	if c.failed {
		return
	}
	c.failed = true
	fmt.Fprintf(c.warn, "warning: the artifact file %s was not written here (%v); the run's artifacts are on the cluster: gonogo show %s --artifact N\n",
		path, err, r.ID)
}

func (c *runCopies) Close() error {
	if c == nil {
		return nil
	}
	return c.files.Close()
}
