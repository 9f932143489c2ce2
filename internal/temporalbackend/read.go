package temporalbackend

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/sdk/client"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// Reading a run needs no worker. A query is answered by a workflow
// worker: cheap when one holds the run in memory, impossible when none
// polls (all stopped, or none started yet), and for a closed workflow it
// makes a worker replay the whole history. So a read asks the workflow's
// query only while the workflow runs and a workflow worker polls the
// run's task queue, and then waits for the answer as long as any query
// (a busy worker answers late, but it answers with the run as it is now).
// Otherwise it folds the run from its workflow's history (history.go),
// which the cluster keeps with or without workers: a closed run is read
// from history (the query is refused at once, without a worker), a running
// one that no worker polls for is read from history at once (a worker
// the cluster still lists but that has not polled for pollerFresh is
// gone), and one whose listed workers all went without answering (killed
// moments ago) is read from history once its query's tries ran out, as
// are the reads that follow it for polledFor. Both give the same run: the
// workflow records in history every event it folds. A read never turns to
// history because a live worker was slow: a history lags the workflow by
// the workflow task under way, and a front end must not act on the run as
// it stood a moment ago while a worker holds it as it is now.

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
	return reading{run: r, keys: v.Keys, edits: v.Edits}, nil
}

// ask asks run id's running workflow query name into out. ok is false,
// with no error, when the history must answer instead: the workflow has
// closed, no workflow worker polls, or none answered in queryTries.
func (b *Backend) ask(ctx context.Context, id engine.RunID, name string, out any, args ...any) (ok bool, err error) {
	polled, err := b.polled(ctx)
	if err != nil {
		return false, fmt.Errorf("run %s: %w", id, err)
	}
	if !polled {
		return false, nil
	}
	res, err := b.queryOpen(ctx, id, name, args...)
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
	}
	// Whatever kept the listed workers from answering (all lost, one
	// stopping under the query, one that cannot read the run), the history
	// says what the run is, or why it cannot be read; and the reads that
	// follow at once (a command reads a run several times) go to the
	// history without waiting on the same silence again.
	b.mu.Lock()
	b.polledAt, b.polledAnswer = time.Now(), false
	b.mu.Unlock()
	return false, nil
}

// readTryWait is how long a read's query waits for a worker's answer
// each time it is asked (queryTries in all): a worker that holds the run
// answers in milliseconds, while the cluster holds a query for a worker
// it lists but that is gone (stopped or killed within pollerFresh) until
// the query's deadline. So a read of an open run whose workers are all
// gone takes about queryTries x readTryWait before the history answers.
const readTryWait = 2 * time.Second

// pollerFresh is how recently a worker listed on a task queue must have
// polled to count as polling: a live worker's long poll renews its
// listing at least once a minute, while the cluster keeps listing a
// stopped or killed one for minutes (matching.PollerHistoryTTL, 5 by
// default).
const pollerFresh = 90 * time.Second

// anyFresh reports whether any of pollers polled within pollerFresh (one
// with no time counts).
func anyFresh(pollers []*taskqueuepb.PollerInfo, now time.Time) bool {
	for _, p := range pollers {
		if p.GetLastAccessTime() == nil || now.Sub(p.GetLastAccessTime().AsTime()) < pollerFresh {
			return true
		}
	}
	return false
}

// polledFor is how long an answer of polled stands: a read does not ask
// the cluster's task queue again for each run it reads.
const polledFor = 3 * time.Second

// polled reports whether any workflow worker polls the backend's task
// queue, as far as the cluster knew at most polledFor ago.
func (b *Backend) polled(ctx context.Context) (bool, error) {
	b.mu.Lock()
	if time.Since(b.polledAt) < polledFor {
		defer b.mu.Unlock()
		return b.polledAnswer, nil
	}
	b.mu.Unlock()
	res, err := b.cfg.Client.DescribeTaskQueue(ctx, b.cfg.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil {
		return false, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.polledAt = time.Now()
	b.polledAnswer = anyFresh(res.GetPollers(), b.polledAt)
	return b.polledAnswer, nil
}

// queryOpen asks an open workflow's query as query does (again when the
// cluster's wait ran out or it was cut off on its way); a closed
// workflow's is refused at once, with no worker asked to replay it.
func (b *Backend) queryOpen(ctx context.Context, id engine.RunID, name string, args ...any) (*client.QueryWorkflowWithOptionsResponse, error) {
	return asked(ctx, func() (*client.QueryWorkflowWithOptionsResponse, error) {
		ctx, cancel := context.WithTimeout(ctx, readTryWait)
		defer cancel()
		return b.cfg.Client.QueryWorkflowWithOptions(ctx, &client.QueryWorkflowWithOptionsRequest{
			WorkflowID: string(id), QueryType: name, Args: args,
			QueryRejectCondition: enumspb.QUERY_REJECT_CONDITION_NOT_OPEN,
		})
	})
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
