package temporalbackend

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/gonogo/gonogo/engine"
)

// A run recorded to await Start (engine.StartOptions.AwaitStart: a Slack
// preview) starts, or is dropped, through two more updates, whose
// validators apply the engine's rules as engine.Service does.
const (
	updStartAwaited  = "start-awaited"
	updCancelAwaited = "cancel-awaited"
)

// StartAwaited starts a run that awaits Start on actor's word; key is the
// click's idempotency key (the update's id), so a repeated click starts it
// once. A person who may not decide is refused with engine.ErrNotApprover,
// a run that does not await Start with engine.ErrNotAwaitingStart.
func (b *Backend) StartAwaited(ctx context.Context, id engine.RunID, actor, key string) (*engine.Run, error) {
	return b.update(ctx, id, updStartAwaited, key, nil, actRecord{Actor: actor, Key: key})
}

// CancelAwaited ends a run that awaits Start, with nothing run.
func (b *Backend) CancelAwaited(ctx context.Context, id engine.RunID, actor string) (*engine.Run, error) {
	return b.update(ctx, id, updCancelAwaited, "", nil, actRecord{Actor: actor})
}

// MayDecide refuses, with an error wrapping engine.ErrNotApprover, a person
// who may not decide on r: the rule the workflow's validators apply, asked
// ahead (a front end that answers at once, before it sends anything).
func (b *Backend) MayDecide(ctx context.Context, r *engine.Run, user string) error {
	m, err := b.member(ctx, r.ID, r, user)
	if err != nil {
		return err
	}
	return mayDecide(r, actRecord{Actor: user, Member: m})
}

func (f *flow) validateStartAwaited(now time.Time, a actRecord) error {
	_, err := engine.StartAwaited(f.run, a.Actor, a.Key, now)
	return err
}

func (f *flow) startAwaited(ctx workflow.Context, a actRecord) error {
	return f.record(ctx, func(now time.Time) ([]engine.Event, error) {
		evs, err := engine.StartAwaited(f.run, a.Actor, a.Key, now)
		if err != nil {
			return nil, fmt.Errorf("start run %s: %w", f.run.ID, err)
		}
		return evs, nil
	})
}

func (f *flow) validateCancelAwaited(now time.Time, a actRecord) error {
	_, err := engine.CancelAwaited(f.run, a.Actor, now)
	return err
}

func (f *flow) cancelAwaited(ctx workflow.Context, a actRecord) error {
	return f.record(ctx, func(now time.Time) ([]engine.Event, error) { return engine.CancelAwaited(f.run, a.Actor, now) })
}
