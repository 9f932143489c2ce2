package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// tickLoop reminds a thread of a checkpoint left waiting
// (GONOGO_REMIND_AFTER) and acts on one left waiting too long
// (GONOGO_DECISION_TIMEOUT): abort the run, or note that it still waits.
// Both are noted with the run, so a restart neither repeats nor forgets
// them; the waiting time is measured from when the attempt finished.
func (b *Bot) tickLoop(ctx context.Context) {
	if b.cfg.RemindAfter <= 0 && b.cfg.DecisionTimeout <= 0 {
		return
	}
	t := time.NewTicker(b.cfg.TickInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			// Under a lingering context, like thread updates: a reminder
			// Slack is accepting at shutdown is still noted, not repeated.
			cctx, done := lingering(ctx, shutdownGrace)
			if err := b.checkWaiting(cctx, time.Now()); err != nil && cctx.Err() == nil {
				b.cfg.Log.Error("check waiting runs", "err", err)
			}
			done()
		}
	}
}

func (b *Bot) checkWaiting(ctx context.Context, now time.Time) error {
	list, err := b.eng.List(ctx)
	if err != nil {
		return err
	}
	for _, sum := range list {
		if sum.State != engine.RunWaiting || sum.Origin.Channel == "" {
			continue
		}
		r, err := b.eng.Load(ctx, sum.ID)
		if err != nil {
			continue
		}
		notes, err := b.eng.Notes(ctx, r.ID)
		if err != nil || notes[noteThread] == "" {
			continue
		}
		for i := range r.Steps {
			s := &r.Steps[i]
			l := s.Latest()
			if s.Status != engine.StepWaiting || l == nil || l.Finished.IsZero() {
				continue
			}
			if _, _, _, retrying := engine.RetryDue(s); retrying {
				// gonogo redoes it itself: nobody is being waited on.
				continue
			}
			waited := now.Sub(l.Finished)
			if b.cfg.DecisionTimeout > 0 && waited >= b.cfg.DecisionTimeout && notes[noteTimeout(s.N, l.N)] == "" {
				b.timeout(ctx, r, s, l, notes[noteThread])
				continue
			}
			if b.cfg.RemindAfter > 0 && waited >= b.cfg.RemindAfter && notes[noteRemind(s.N, l.N)] == "" {
				msg := Reminder(r, s.N, b.view(ctx, r, s.N, notes))
				if _, err := b.send.post(ctx, r.Origin.Channel, notes[noteThread], FallbackText(msg), msg); err != nil {
					return err
				}
				if err := b.eng.SetNotes(ctx, r.ID, map[string]string{noteRemind(s.N, l.N): now.UTC().Format(time.RFC3339)}); err != nil {
					return err
				}
				b.schedule(r.ID) // the step message shows the reminder
			}
		}
	}
	return nil
}

func (b *Bot) timeout(ctx context.Context, r *engine.Run, s *engine.Step, l *engine.Attempt, thread string) {
	key := noteTimeout(s.N, l.N)
	if b.cfg.TimeoutAction == "abort" {
		_, err := b.eng.Decide(ctx, r.ID, engine.Decision{Kind: engine.DecideAbort, Actor: "gonogo (decision timeout)",
			Step: s.N, Attempt: l.N, Key: "timeout:" + string(r.ID) + ":" + key}, nil)
		if err != nil {
			b.cfg.Log.Error("abort on decision timeout", "run", r.ID, "err", err)
			return
		}
	} else {
		text := fmt.Sprintf("Step %d of %d (%s) has waited %s for a decision; it keeps waiting.",
			s.N, len(r.Steps), s.Skill, b.cfg.DecisionTimeout)
		if _, err := b.send.post(ctx, r.Origin.Channel, thread, text, nil); err != nil {
			b.cfg.Log.Error("post the decision timeout", "run", r.ID, "err", err)
			return
		}
	}
	if err := b.eng.SetNotes(ctx, r.ID, map[string]string{key: "1"}); err != nil {
		b.cfg.Log.Error("note the decision timeout", "run", r.ID, "err", err)
	}
}
