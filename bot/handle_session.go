package bot

import (
	"context"
	"fmt"

	"github.com/slack-go/slack/slackevents"

	"github.com/gonogo/gonogo/engine"
)

// onSessionStopped carries out a click on the Stop button of a run's
// agent session (agent_session_stopped): every step of the run that runs
// is cancelled, as the step's Cancel button does, by the person who
// clicked, when they may decide on the run. The step is then offered for
// redo; the run goes on waiting, and its next sync moves the session off
// processing (Slack leaves that to the app).
func (b *Bot) onSessionStopped(ctx context.Context, ev *slackevents.AgentSessionStoppedEvent, team string) {
	ctx = asPerson(ctx, team)
	r, err := b.runOfThread(ctx, ev.Channel, ev.ThreadTimestamp)
	switch {
	case err != nil:
		b.couldNotRead(ctx, ev.Channel, ev.ThreadTimestamp, ev.User, err)
		return
	case r == nil:
		b.cfg.Log.Debug("Stop on an agent session that is no run's thread", "channel", ev.Channel, "thread", ev.ThreadTimestamp)
		return
	}
	if may, err := b.mayDecide(ctx, r, ev.User); err != nil || !may {
		if err != nil {
			b.couldNotRead(ctx, ev.Channel, ev.ThreadTimestamp, ev.User, err)
		} else {
			b.tell(ctx, ev.Channel, ev.ThreadTimestamp, ev.User, mayNot(ActCancel, r.StartedBy), nil)
		}
		return
	}
	for _, s := range runningSteps(r) {
		if err := b.eng.Cancel(ctx, r.ID, s.N, s.Latest().N, ev.User); err != nil {
			b.decisionFailed(ctx, ev.Channel, ev.ThreadTimestamp, ev.User, err)
		}
	}
}

// runOfThread is the unfinished run whose thread has root ts thread in
// channel; nil when there is none.
func (b *Bot) runOfThread(ctx context.Context, channel, thread string) (*engine.Run, error) {
	all, err := b.eng.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	for _, s := range all {
		if s.Origin.Channel != channel || s.State == engine.RunCompleted || s.State == engine.RunAborted {
			continue
		}
		notes, err := b.eng.Notes(ctx, s.ID)
		if err != nil {
			return nil, fmt.Errorf("read the notes of run %s: %w", s.ID, err)
		}
		if notes[noteThread] == thread {
			return b.eng.Load(ctx, s.ID)
		}
	}
	return nil, nil
}
