package engine

import (
	"context"
	"errors"
	"fmt"
)

// startStep commits the start of an attempt (the caller holds a slot and
// the run's lock) and hands the execution to Run.
func (s *Service) startStep(ctx context.Context, r *Run, n int) (*Run, error) {
	// The execution is promised to Run before its start is committed, so
	// a stopping Run either refuses it here or waits for it: nothing is
	// committed after Run returns.
	s.mu.Lock()
	ok := s.reserveLocked()
	s.mu.Unlock()
	if !ok {
		return nil, errStopping
	}
	evs, err := Start(r, n, s.now())
	if err == nil {
		r, err = s.commit(ctx, r, evs, Commit{})
	}
	if err != nil {
		s.mu.Lock()
		s.handLocked(nil)
		s.mu.Unlock()
		return nil, err
	}
	st := r.Step(n)
	attempt := st.Latest().N
	job, ferr := s.prepare(ctx, r, st)
	// Cancel and an abort may stop the attempt before Run has started it:
	// halted keeps their cause until the execution's context exists.
	halted, halt := context.WithCancelCause(context.Background())
	key := execKey{r.ID, n, attempt}
	s.mu.Lock()
	s.running[key] = halt
	s.handLocked(func(runCtx context.Context) {
		ectx, cancel := context.WithCancelCause(runCtx)
		unhook := context.AfterFunc(halted, func() { cancel(context.Cause(halted)) })
		recorded := s.execute(runCtx, ectx, r, n, attempt, job, ferr)
		unhook()
		s.mu.Lock()
		delete(s.running, key)
		s.mu.Unlock()
		cancel(nil)
		halt(nil)
		s.release()
		if recorded {
			if _, err := s.advance(runCtx, r.ID); err != nil && runCtx.Err() == nil {
				s.log.Error("advance run", "run", r.ID, "err", err)
			}
		}
	})
	s.mu.Unlock()
	return r, nil
}

// prepare composes the job for an attempt: the rules are PlanAttempt and
// ComposeJob; prepare reads what they ask for. An error here (a threaded
// step that produced nothing, a skill that vanished) fails the attempt
// without running anything.
func (s *Service) prepare(ctx context.Context, r *Run, st *Step) (Job, error) {
	p, err := PlanAttempt(r, st, s.catalog, s.expand.Policy)
	if err != nil {
		return p.Job, err
	}
	read := make(map[ArtifactRef]ArtifactRead, len(p.Reads))
	for _, ref := range p.Reads {
		body, err := s.store.Artifact(ctx, r.ID, ref.Step, ref.Attempt)
		read[ref] = ArtifactRead{Body: body, Err: err}
	}
	var pre error
	if p.CheckPre {
		pre = CheckConditions(ctx, p.Step.Rules.Pre, nil, s.probe)
	}
	return ComposeJob(p, read, pre, s.catalog, s.now())
}

// execute runs one attempt in ctx (which a cancel or an abort ends with
// its cause), judges it and records the result; it reports whether the
// result was recorded. runCtx is Run's: when it ends, gonogo is stopping.
func (s *Service) execute(runCtx, ctx context.Context, r *Run, n, attempt int, job Job, prepErr error) bool {
	st := r.Step(n)
	var out Outcome
	switch {
	case prepErr != nil:
		out.Err = prepErr
	case r.DryRun:
		out.NotRun = true
	default:
		started := s.now()
		stop := s.pulse()
		out = s.runner.Run(ctx, job, func(p Progress) {
			if s.notifier == nil {
				return
			}
			if p.Elapsed == 0 {
				p.Elapsed = s.now().Sub(started)
			}
			s.notifier.Notify(Notice{Run: r, Event: Event{Type: EvStepStarted, Step: n, Attempt: attempt}, Progress: &p})
		})
		stop()
	}
	if runCtx.Err() != nil {
		// gonogo is stopping: leave the step running in the store, so it is
		// marked interrupted and offered for redo when the store reopens.
		return false
	}
	e := AttemptEnd{Run: r, Step: n, Attempt: attempt, Outcome: out, RateLimit: s.limit}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		e.Cancel = cause // a person's cancel or an abort, with its reason
	}
	e.Skill, _ = s.catalog.Skill(job.Skill)
	f := JudgeAttempt(e)
	var post error
	if PostconditionsDue(st, f) {
		post = CheckConditions(ctx, st.Rules.Post, out.Artifact, s.probe)
	}
	var c Commit
	f, c.Artifacts, c.Files = SettleAttempt(e, f, post, s.expand)
	unlock := s.lock(r.ID)
	cur, err := s.store.Load(runCtx, r.ID)
	if err == nil {
		var evs []Event
		if evs, err = Finish(cur, n, attempt, f, s.now()); err == nil {
			_, err = s.commit(runCtx, cur, evs, c)
		}
	}
	unlock()
	if err != nil {
		if !errors.Is(err, ErrStale) {
			s.log.Error("record step result", "run", r.ID, "step", n, "attempt", attempt, "err", err)
			if s.notifier != nil {
				s.notifier.Notify(Notice{Run: r, Event: Event{Type: EvStepFinished, Step: n, Attempt: attempt},
					Err: fmt.Errorf("step %d: could not record its result: %w", n, err)})
			}
		}
		return false
	}
	return true
}
