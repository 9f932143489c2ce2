package temporalbackend

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// A run with a Slack thread has its thread brought up to date by a sync
// on one of the serve replicas that share the Slack app: the run's
// workflow schedules each sync as an activity on SlackQueue, so exactly
// one sync of a run runs at a time across replicas, and a sync cut off
// (its replica died) is retried on another. Syncs follow the run's start
// and every change the workflow records, never hold the run (steps,
// decisions and timers go on while one runs), and a change while one runs
// asks for one more when it ends. A finished run's workflow stays open
// until a sync says its thread shows the run in full, so the front end
// can still keep notes and post the end of the run; at most threadGrace
// after the run ended.

const (
	// SlackQueue is the task queue the serve replicas poll for thread
	// syncs and for envelopes to carry out (CarryOutActivity).
	SlackQueue = "gonogo-slack"
	// SyncActivity is the thread sync activity.
	SyncActivity = "SyncThread"

	// changeSlack gates the thread syncs and a finished run's wait for
	// its thread: runs recorded before them replay without.
	changeSlack = "gonogo-slack-sync"

	syncStartToClose = 2 * time.Minute
	syncHeartbeat    = 20 * time.Second
	// syncGiveUp bounds one sync with its retries; a sync that failed
	// that long (Slack refuses the thread, the notes cannot be kept, no
	// replica polls SlackQueue) is tried again syncAgainAfter later, as a
	// new sync that first looks in Slack for what the failed one posted.
	// Meanwhile the run may continue as new.
	syncGiveUp     = 10 * time.Minute
	syncAgainAfter = time.Minute
	// threadGrace is how long a finished run's workflow waits for its
	// thread to show the run in full before it ends anyway.
	threadGrace = 24 * time.Hour
)

// SlackSide is what a serve replica does for runs on the Slack queue.
type SlackSide interface {
	// SyncThread brings run id's thread up to date once. retried is true when an
	// earlier attempt of this same sync was cut off (attempt > 1). later > 0 asks
	// for another sync after that long; done says the thread shows the finished run in full.
	SyncThread(ctx context.Context, id engine.RunID, retried bool) (later time.Duration, done bool, err error)
}

// RegisterSlack registers the thread sync activity (SyncActivity) on a
// worker polling SlackQueue.
func RegisterSlack(r worker.ActivityRegistry, s SlackSide) {
	r.RegisterActivityWithOptions(threadSync{side: s}.sync, activity.RegisterOptions{Name: SyncActivity})
}

// threadSync is the thread sync activity on a serve replica.
type threadSync struct{ side SlackSide }

// sync runs one SyncThread, heartbeating while it runs so that a replica
// that died under it is noticed within syncHeartbeat and the sync retried
// elsewhere.
func (t threadSync) sync(ctx context.Context, in syncRecord) (syncedRecord, error) {
	if err := record.CheckVersion(in.V); err != nil {
		return syncedRecord{}, temporal.NewNonRetryableApplicationError(err.Error(), "version", nil)
	}
	hb := newHeartbeat(ctx)
	defer hb.stop()
	later, done, err := t.side.SyncThread(ctx, engine.RunID(in.Run), in.Retried || activity.GetInfo(ctx).Attempt > 1)
	if err != nil {
		return syncedRecord{}, err
	}
	return syncedRecord{V: record.Version, LaterNS: int64(max(later, 0)), Done: done}, nil
}

// threadSyncs is a run workflow's upkeep of its Slack thread: whether a
// change waits for a sync (dirty), whether a sync is under way, and what
// the last one answered.
type threadSyncs struct {
	dirty, running, done bool
	later                time.Duration
	// failed says the last sync gave up: the next one reconciles.
	failed bool
}

// startSyncs has a coroutine keep the run's thread synced, for a run with
// a Slack thread started under changeSlack. The first sync follows at
// once.
func (f *flow) startSyncs(ctx workflow.Context) {
	if f.slack < 1 || f.in.SlackQueue == "" || f.run.Origin.Channel == "" {
		return
	}
	f.syncs = &threadSyncs{dirty: true}
	// Neither an operator's cancel nor the end of the run stops the syncs:
	// the thread is to show that end too.
	sctx, _ := workflow.NewDisconnectedContext(ctx)
	workflow.Go(sctx, f.syncLoop)
}

// threadChanged marks a change the thread is to show.
func (f *flow) threadChanged() {
	if f.syncs != nil {
		f.syncs.dirty, f.syncs.done = true, false
	}
}

// syncing reports whether a sync is under way: a workflow that continued
// as new under it would leave it running beside the new one's.
func (f *flow) syncing() bool { return f.syncs != nil && f.syncs.running }

// syncLoop runs one sync at a time: when a change waits for one, or when
// the last asked for another later (a change before then syncs at once).
func (f *flow) syncLoop(ctx workflow.Context) {
	s := f.syncs
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              f.in.SlackQueue,
		StartToCloseTimeout:    syncStartToClose,
		ScheduleToCloseTimeout: syncGiveUp,
		HeartbeatTimeout:       syncHeartbeat,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: 30 * time.Second},
	})
	wake := func() bool { return s.dirty }
	for {
		var err error
		if s.later > 0 {
			_, err = workflow.AwaitWithTimeout(ctx, s.later, wake)
		} else {
			err = workflow.Await(ctx, wake)
		}
		if err != nil {
			return
		}
		s.dirty, s.running, s.later, s.done = false, true, 0, false
		var res syncedRecord
		in := syncRecord{V: record.Version, Run: string(f.run.ID), Retried: s.failed}
		err = workflow.ExecuteActivity(actx, SyncActivity, in).Get(ctx, &res)
		if err == nil {
			err = record.CheckVersion(res.V)
		}
		s.running = false
		if err != nil {
			// The sync gave up (syncGiveUp) or was refused: the thread is
			// tried again later, or at the next change.
			workflow.GetLogger(ctx).Error("sync the run's thread", "run", f.run.ID, "err", err)
			s.failed, s.later = true, syncAgainAfter
			continue
		}
		s.failed = false
		s.later, s.done = time.Duration(res.LaterNS), res.Done && !s.dirty
	}
}

// awaitThread holds a finished run's workflow until a sync says its thread
// shows the run in full, at most threadGrace.
func (f *flow) awaitThread(ctx workflow.Context) error {
	s := f.syncs
	if s == nil {
		return nil
	}
	_, err := workflow.AwaitWithTimeout(ctx, threadGrace, func() bool { return s.done && !s.dirty && !s.running })
	return err
}
