package temporalbackend

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// Reading a run needs no worker. A query is answered by a workflow
// worker: cheap when one holds the run in memory, impossible when none
// polls (all stopped, or none started yet), and for a closed workflow it
// makes a worker replay the whole history. So a read asks the workflow's
// query only while the workflow runs, waits at most readWait for an
// answer, and otherwise folds the run from its workflow's history
// (history.go), which the cluster keeps with or without workers: a closed
// run is always read from history (the query is refused at once, without
// a worker), and a running one whose workers are gone is read from history
// within readWait. Both give the same run: the workflow records in history
// every event it folds.

// readWait is how long a read waits for a workflow worker to answer its
// query; quietFor is how long, after one went unanswered, reads go to the
// history straight away instead of waiting again.
const (
	readWait = 2 * time.Second
	quietFor = 30 * time.Second
)

// Load returns the run as its workflow holds it.
func (b *Backend) Load(ctx context.Context, id engine.RunID) (*engine.Run, error) {
	r, err := b.read(ctx, id)
	return r.run, err
}

// read is the run and its current artifact keys: from its workflow's run
// query, or from its history when no worker answered.
func (b *Backend) read(ctx context.Context, id engine.RunID) (reading, error) {
	var v runView
	ok, err := b.ask(ctx, id, qryRun, &v)
	if err != nil {
		return reading{}, err
	}
	if !ok {
		return b.fromHistory(ctx, id)
	}
	r, err := v.run()
	if err != nil {
		return reading{}, fmt.Errorf("run %s: %w", id, err)
	}
	return reading{run: r, keys: v.Keys}, nil
}

// ask asks run id's running workflow query name into out. ok is false,
// with no error, when no worker answered: the workflow has closed, none
// polls, or none answered within readWait.
func (b *Backend) ask(ctx context.Context, id engine.RunID, name string, out any, args ...any) (ok bool, err error) {
	if b.quiet() {
		return false, nil
	}
	qctx, cancel := context.WithTimeout(ctx, readWait)
	defer cancel()
	res, err := b.cfg.Client.QueryWorkflowWithOptions(qctx, &client.QueryWorkflowWithOptionsRequest{
		WorkflowID: string(id), QueryType: name, Args: args,
		// A closed workflow's query would need a worker to replay it.
		QueryRejectCondition: enumspb.QUERY_REJECT_CONDITION_NOT_OPEN,
	})
	var nf *serviceerror.NotFound
	switch {
	case err == nil && res.QueryRejected != nil:
		return false, nil
	case err == nil:
		if err := res.QueryResult.Get(out); err != nil {
			return false, fmt.Errorf("run %s: %w", id, err)
		}
		return true, nil
	case errors.As(err, &nf):
		return false, fmt.Errorf("run %s: %w", id, engine.ErrNotFound)
	case ctx.Err() != nil:
		return false, ctx.Err()
	case timedOut(err):
		b.hush()
	}
	// Whatever kept the workers from answering (none polls, one stopping
	// under the query, one that cannot read the run), the history says
	// what the run is, or why it cannot be read.
	return false, nil
}

// quiet reports whether a query went unanswered less than quietFor ago.
func (b *Backend) quiet() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return time.Now().Before(b.quietUntil)
}

func (b *Backend) hush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.quietUntil = time.Now().Add(quietFor)
}

// Journal returns the run's events in seq order.
func (b *Backend) Journal(ctx context.Context, id engine.RunID) ([]engine.Event, error) {
	return b.journalFrom(ctx, id, 1)
}

// journalFrom returns the run's events from seq from on: page by page
// through the journal query, or from the workflow's history when no
// worker answers.
func (b *Backend) journalFrom(ctx context.Context, id engine.RunID, from uint64) ([]engine.Event, error) {
	var out []engine.Event
	for next := max(from, 1); next != 0; {
		var p journalPage
		ok, err := b.ask(ctx, id, qryJournal, &p, next)
		if err != nil {
			return nil, err
		}
		if !ok {
			r, err := b.fromHistory(ctx, id)
			if err != nil {
				return nil, err
			}
			return r.journal[min(int(max(from, 1))-1, len(r.journal)):], nil
		}
		if err := record.CheckVersion(p.V); err != nil {
			return nil, err
		}
		evs, err := record.UnmarshalEvents(p.Events)
		if err != nil {
			return nil, err
		}
		out, next = append(out, evs...), p.Next
	}
	return out, nil
}

// Artifact returns the current artifact of a step attempt (a person's
// edit, else the agent's output) from the artifact store.
func (b *Backend) Artifact(ctx context.Context, id engine.RunID, step, attempt int) ([]byte, error) {
	r, err := b.read(ctx, id)
	if err != nil {
		return nil, err
	}
	key, ok := r.keys[refKey(step, attempt)]
	if !ok {
		return nil, fmt.Errorf("run %s step %d attempt %d has no artifact: %w", id, step, attempt, engine.ErrNotFound)
	}
	return b.cfg.Artifacts.Get(ctx, key)
}
