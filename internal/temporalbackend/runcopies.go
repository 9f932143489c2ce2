package temporalbackend

import (
	"context"
	"fmt"
	"io"

	"github.com/gonogo/gonogo/engine"
)

// RunCopies writes the artifact files of a run followed from a terminal
// on the cluster under the data directory, where a run on bbolt
// has its own (runs/<run>/NN-<skill>.md, earlier attempts by their
// attempt's name): the engine says which files each change of the run
// writes and removes (engine.FileChanges), the cluster's artifact store
// has their bodies. A file that cannot be written is said once on
// stderr; the run goes on, and its artifact is still on the cluster.
type RunCopies struct {
	files RunFiles
	b     *Backend
	last  *engine.Run // the run as the files stand; nil before the first update
	warn  io.Writer
	// failed says a file could not be written: said once.
	failed bool
}

// RunFiles is where a followed run's artifact files are written
// (storage.RunFiles, by the paths engine.FileChanges gives).
type RunFiles interface {
	Write(path string, body []byte) error
	Remove(path string) error
	Close() error
}

// NewRunCopies writes the files of the run b follows into files, saying a
// file it cannot write on warn.
func NewRunCopies(b *Backend, files RunFiles, warn io.Writer) *RunCopies {
	return &RunCopies{files: files, b: b, warn: warn}
}

// Update makes the files stand as run r says, from where they stood; a
// nil RunCopies (the data directory could not be opened) writes nothing.
func (c *RunCopies) Update(ctx context.Context, r *engine.Run) {
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

func (c *RunCopies) fail(r *engine.Run, path string, err error) {
	if c.failed {
		return
	}
	c.failed = true
	fmt.Fprintf(c.warn, "warning: the artifact file %s was not written here (%v); the run's artifacts are on the cluster: gonogo show %s --artifact N\n",
		path, err, r.ID)
}

func (c *RunCopies) Close() error {
	if c == nil {
		return nil
	}
	return c.files.Close()
}

// localNotices hands a followed run's notices on once the run's artifact
// files stand, under this machine's data directory, as the notice's run
// says (RunCopies): the terminal then shows where they are, as on bbolt.
type localNotices struct {
	n     engine.Notifier
	files func(*engine.Run)
}

func (l localNotices) Notify(no engine.Notice) {
	if no.Run != nil && no.Progress == nil && no.Err == nil {
		l.files(no.Run)
	}
	l.n.Notify(no)
}

// Notifier hands n a followed run's notices once the files of each stand
// (see localNotices); ctx bounds the artifact reads.
func (c *RunCopies) Notifier(ctx context.Context, n engine.Notifier) engine.Notifier {
	return localNotices{n: n, files: func(r *engine.Run) { c.Update(ctx, r) }}
}
