package temporalbackend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"go.temporal.io/sdk/client"

	"github.com/gonogo/gonogo/engine"
)

// ArtifactSum is the size and sha256 of an attempt's current artifact, as
// storage.ArtifactSum is on bbolt (the same fields, so one converts to the
// other).
type ArtifactSum struct {
	Step    int
	Attempt int
	Size    int
	SHA256  string // hex
}

// Reader reads and acts on runs on a Temporal cluster for gonogo runs,
// show, export, decide and pause: each run's state and journal as Backend
// reads them (its workflow's queries, else its
// history, so no worker need run), artifacts from the store
// GONOGO_ARTIFACTS names, and decisions, pauses and resumes sent to the
// run's workflow from any shell.
type Reader struct {
	b *Backend
	c client.Client
	// at names the cluster and namespace, for a run not found there.
	at string
}

// NewReader reads runs through b; closing it closes c, b's client. at
// names the cluster and namespace where a run is not found ("on Temporal
// at host:7233, namespace gonogo"); empty, "on the Temporal cluster".
func NewReader(b *Backend, c client.Client, at string) *Reader {
	return &Reader{b: b, c: c, at: at}
}

// SlackRuns is the engine the Slack bot drives on the cluster: Backend,
// with List reading the newest runs (listLimit at most), as Reader does.
type SlackRuns struct{ *Backend }

func (s SlackRuns) List(ctx context.Context) ([]engine.RunSummary, error) {
	return s.Backend.List(ctx, listLimit)
}

// listLimit is how many of the newest runs gonogo runs lists from a
// cluster.
const listLimit = 200

func (r *Reader) Close() error { r.c.Close(); return nil }

// Load reads a run without the artifact file names a run on bbolt writes
// under the data directory: none is written on this machine.
func (r *Reader) Load(ctx context.Context, id engine.RunID) (*engine.Run, error) {
	run, err := r.b.Load(ctx, id)
	return withoutFiles(run), err
}

func (r *Reader) Artifact(ctx context.Context, id engine.RunID, step, attempt int) ([]byte, error) {
	return r.b.Artifact(ctx, id, step, attempt)
}

// RunWithJournal folds the journal it reads, so the run and its journal
// agree whatever happened between two queries.
func (r *Reader) RunWithJournal(ctx context.Context, id engine.RunID) (*engine.Run, []engine.Event, error) {
	return r.b.RunWithJournal(ctx, id)
}

// RunWithJournal is a run and its journal, the run folded from the journal
// it reads, so the two agree whatever happened between two queries. No
// artifact file is named: none is written on this machine.
func (b *Backend) RunWithJournal(ctx context.Context, id engine.RunID) (*engine.Run, []engine.Event, error) {
	evs, err := b.Journal(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	run, err := engine.Fold(&engine.Run{}, evs)
	if err != nil {
		return nil, nil, fmt.Errorf("run %s: fold its journal: %w", id, err)
	}
	for i := range evs {
		evs[i].File = ""
	}
	return withoutFiles(run), evs, nil
}

// ArtifactSums reads each attempt's current artifact and sums it.
func (r *Reader) ArtifactSums(ctx context.Context, id engine.RunID) ([]ArtifactSum, error) {
	run, err := r.b.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []ArtifactSum
	for _, s := range run.Steps {
		for _, a := range s.Attempts {
			body, err := r.b.Artifact(ctx, id, s.N, a.N)
			if errors.Is(err, engine.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			sum := sha256.Sum256(body)
			out = append(out, ArtifactSum{Step: s.N, Attempt: a.N, Size: len(body), SHA256: hex.EncodeToString(sum[:])})
		}
	}
	return out, nil
}

// ArtifactVersions are the attempt's versions the cluster keeps (see
// Backend.ArtifactVersions).
func (r *Reader) ArtifactVersions(ctx context.Context, id engine.RunID, step, attempt int) ([][]byte, error) {
	return r.b.ArtifactVersions(ctx, id, step, attempt)
}

// List reads the newest runs (listLimit at most) from the cluster's
// visibility store.
func (r *Reader) List(ctx context.Context) ([]engine.RunSummary, error) {
	return r.b.List(ctx, listLimit)
}

// Decide sends d to the run's workflow, which carries it out at once.
func (r *Reader) Decide(ctx context.Context, id engine.RunID, d engine.Decision) (*engine.Run, bool, error) {
	run, err := r.b.Decide(ctx, id, d, nil)
	return withoutFiles(run), true, err
}

// Edit sends an edit with its replacement artifact to the run's workflow,
// as a person's edit in Slack goes: the body is kept in the artifact
// store under its own key, beside the agent's text, and the workflow goes
// on with it at once. The run web page's edits come here.
func (r *Reader) Edit(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (*engine.Run, bool, error) {
	run, err := r.b.Decide(ctx, id, d, body)
	return withoutFiles(run), true, err
}

// Pause sends the pause to the run's workflow, which holds the run at its
// next checkpoint whoever started it.
func (r *Reader) Pause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, bool, error) {
	run, err := r.b.Pause(ctx, id, actor)
	return withoutFiles(run), true, err
}

// Unpause sends the resume to the run's workflow, which goes on with the
// run at once.
func (r *Reader) Unpause(ctx context.Context, id engine.RunID, actor string, m engine.Mode) (*engine.Run, bool, error) {
	run, err := r.b.Unpause(ctx, id, actor, m)
	return withoutFiles(run), true, err
}

// Where says where the runs are, for a run that is not there.
func (r *Reader) Where() string {
	if r.at == "" {
		return "on the Temporal cluster"
	}
	return r.at
}

// Describe names the cluster in gonogo decide's and pause's answers.
func (r *Reader) Describe() string { return "the Temporal cluster" }

// withoutFiles drops r's artifact file names, in place, for a reader of a
// run on the cluster that writes no files on this machine; r may be nil.
func withoutFiles(r *engine.Run) *engine.Run {
	if r == nil {
		return nil
	}
	for i := range r.Steps {
		for j := range r.Steps[i].Attempts {
			r.Steps[i].Attempts[j].File = ""
		}
	}
	return r
}
