package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"go.temporal.io/sdk/client"

	"github.com/gonogo/gonogo/engine"
	settings "github.com/gonogo/gonogo/internal/config"
	"github.com/gonogo/gonogo/internal/temporalbackend"
	"github.com/gonogo/gonogo/storage"
)

// clusterReader reads and acts on runs on a Temporal cluster for gonogo
// runs, show, export, decide and pause: each run's state and journal as
// temporalbackend.Backend reads them (its workflow's queries, else its
// history, so no worker need run), artifacts from the store
// GONOGO_ARTIFACTS names, and decisions, pauses and resumes sent to the
// run's workflow from any shell.
type clusterReader struct {
	b *temporalbackend.Backend
	c client.Client
	// at names the cluster and namespace, for a run not found there.
	at string
}

// listLimit is how many of the newest runs gonogo runs lists from a
// cluster.
const listLimit = 200

// openCluster is the runReader of the cluster GONOGO_TEMPORAL_ADDR names;
// ok is false when it names none.
func openCluster(ctx context.Context, e env, data string) (r *clusterReader, ok bool, err error) {
	tc, err := settings.LoadTemporal(ctx, e.lookup)
	if err != nil || tc.Addr == "" {
		return nil, false, err
	}
	cfg, err := loadConfig(ctx, e.lookup)
	if err != nil {
		return nil, true, err
	}
	b, c, err := temporalBackend(ctx, e, cfg, tc, data)
	if err != nil {
		return nil, true, err
	}
	return &clusterReader{b: b, c: c, at: fmt.Sprintf("on Temporal at %s, namespace %s", tc.Addr, tc.Namespace)}, true, nil
}

func (r *clusterReader) Close() error { r.c.Close(); return nil }

// Load reads a run without the artifact file names a run on bbolt writes
// under the data directory: none is written on this machine.
func (r *clusterReader) Load(ctx context.Context, id engine.RunID) (*engine.Run, error) {
	run, err := r.b.Load(ctx, id)
	return withoutFiles(run), err
}

func (r *clusterReader) Artifact(ctx context.Context, id engine.RunID, step, attempt int) ([]byte, error) {
	return r.b.Artifact(ctx, id, step, attempt)
}

// RunWithJournal folds the journal it reads, so the run and its journal
// agree whatever happened between two queries.
func (r *clusterReader) RunWithJournal(ctx context.Context, id engine.RunID) (*engine.Run, []engine.Event, error) {
	evs, err := r.b.Journal(ctx, id)
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
func (r *clusterReader) ArtifactSums(ctx context.Context, id engine.RunID) ([]storage.ArtifactSum, error) {
	run, err := r.b.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []storage.ArtifactSum
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
			out = append(out, storage.ArtifactSum{Step: s.N, Attempt: a.N, Size: len(body), SHA256: hex.EncodeToString(sum[:])})
		}
	}
	return out, nil
}

// ArtifactVersions are the attempt's versions the cluster keeps (see
// temporalbackend.Backend.ArtifactVersions).
func (r *clusterReader) ArtifactVersions(ctx context.Context, id engine.RunID, step, attempt int) ([][]byte, error) {
	return r.b.ArtifactVersions(ctx, id, step, attempt)
}

// List reads the newest runs (listLimit at most) from the cluster's
// visibility store.
func (r *clusterReader) List(ctx context.Context) ([]engine.RunSummary, error) {
	return r.b.List(ctx, listLimit)
}

// Decide sends d to the run's workflow, which carries it out at once.
func (r *clusterReader) Decide(ctx context.Context, id engine.RunID, d engine.Decision) (*engine.Run, bool, error) {
	run, err := r.b.Decide(ctx, id, d, nil)
	return withoutFiles(run), true, err
}

// Pause sends the pause to the run's workflow, which holds the run at its
// next checkpoint whoever started it.
func (r *clusterReader) Pause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, bool, error) {
	run, err := r.b.Pause(ctx, id, actor)
	return withoutFiles(run), true, err
}

// Unpause sends the resume to the run's workflow, which goes on with the
// run at once.
func (r *clusterReader) Unpause(ctx context.Context, id engine.RunID, actor string, m engine.Mode) (*engine.Run, bool, error) {
	run, err := r.b.Unpause(ctx, id, actor, m)
	return withoutFiles(run), true, err
}

func (r *clusterReader) where() string {
	if r.at == "" {
		return "on the Temporal cluster"
	}
	return r.at
}

// describe names the cluster in gonogo decide's and pause's answers.
func (r *clusterReader) Describe() string { return "the Temporal cluster" }
