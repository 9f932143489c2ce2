package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/gonogo/gonogo/engine"
)

// keptEnvelope is what the inbox keeps of an envelope: the fields of Socket
// Mode's own, so that what is on disk reads like what Slack sent. It holds
// what people typed (as run artifacts do), no token (Slack's verification
// token is taken out of the payload, see scrub) and no response_url the
// bot does not use.
type keptEnvelope struct {
	Type         string          `json:"type"`
	EnvelopeID   string          `json:"envelope_id"`
	Payload      json.RawMessage `json:"payload"`
	RetryAttempt int             `json:"retry_attempt,omitempty"`
}

// triggerLife is how long Slack accepts a trigger_id for opening a modal.
const triggerLife = 3 * time.Second

// worthKeeping says whether an envelope asks for work: connection events
// (hello, disconnect) and envelopes slack-go could not read are not kept.
func worthKeeping(evt socketmode.Event) bool {
	if evt.Request == nil || evt.Request.EnvelopeID == "" {
		return false
	}
	switch evt.Type {
	case socketmode.EventTypeEventsAPI, socketmode.EventTypeInteractive, socketmode.EventTypeSlashCommand:
		return true
	}
	return false
}

// arrive takes an envelope that asks for work as it arrives. It is first
// kept in the inbox (Slack never sends an acknowledged envelope again, so
// it must be on disk before the ack), then acknowledged, with the answer
// the person sees at once when there is one (ackPayload). Then, before it
// queues behind other work: a click on Edit, Redo or Save as workflow
// opens its modal, while the click's trigger is young, and a mention is
// answered (answerMention).
//
// What the inbox cannot keep depends on whether Slack sends it again.
// Slack retries only Events API envelopes that go unacknowledged (three
// times, the envelope's retry_attempt counting them; docs.slack.dev/apis/
// events-api): a mention that cannot be kept is not acknowledged, and
// comes back. An interaction (a click, a modal's submission) or a slash
// command is sent once: unacknowledged within 3 seconds, Slack registers
// a timeout and shows the person an error, and sends nothing again
// (docs.slack.dev/interactivity/handling-user-interaction,
// docs.slack.dev/tools/bolt-python/concepts/acknowledge). So it is
// acknowledged all the same and carried out from memory: what it asks is
// done, or the person is told it was not, as for any envelope; only a
// crash before it is carried out loses it, as it would without an inbox.
//
// The consumer promised the envelope to the work queue (expect) before
// arrive began; arrive keeps that promise or withdraws it, so the handlers
// stopping with the bot wait for an envelope acknowledged here.
func (b *Bot) arrive(ctx context.Context, l *link, evt socketmode.Event, received time.Time) {
	pushed := false
	defer func() {
		if !pushed {
			b.work.giveUp()
		}
	}()
	env := envelope{evt: evt, received: received}
	if b.cfg.Inbox != nil {
		id, err := b.keep(ctx, evt)
		switch {
		case errors.Is(err, engine.ErrDuplicate):
			// Kept already by another replica, which Slack sent it to
			// first: the inbox has it carried out there, or by the
			// replicas when that one is gone. It is acknowledged so
			// Slack stops sending it.
			_ = b.ackOn(ctx, l, evt.Request.EnvelopeID, nil)
			b.cfg.Metrics.acked(time.Since(received))
			return
		case err != nil && ctx.Err() != nil:
			return // stopping: nothing is acknowledged any more
		case err != nil && evt.Type == socketmode.EventTypeEventsAPI:
			b.cfg.Log.Error("an event could not be kept, so it was not acknowledged; Slack will send it again",
				"envelope", evt.Request.EnvelopeID, "type", evt.Request.Type, "err", err)
			return
		case err != nil:
			b.cfg.Log.Error("a click or command could not be kept in the inbox; Slack never sends one again, so it is acknowledged and carried out from memory",
				"envelope", evt.Request.EnvelopeID, "type", evt.Request.Type, "err", err)
		default:
			env.kept = id
		}
	}
	payload, answered := b.ackPayload(ctx, evt)
	if err := b.ackOn(ctx, l, evt.Request.EnvelopeID, payload); err != nil && payload != nil {
		_ = b.ackOn(ctx, l, evt.Request.EnvelopeID, nil)
		answered = false
	}
	b.cfg.Metrics.acked(time.Since(received))
	b.cfg.Log.Debug("envelope kept and acknowledged", "envelope", evt.Request.EnvelopeID, "type", evt.Request.Type)
	env.answered = answered
	first := !b.seen.has(evt.Request.EnvelopeID) // a redelivery of an envelope carried out opens nothing
	if a, ok := modalClick(evt); ok && first {
		env.opened, env.view = true, b.openLoading(ctx, a, received)
	}
	if evt.Type == socketmode.EventTypeEventsAPI && first && evt.Request.RetryAttempt == 0 {
		env.answered = b.answerMention(ctx, evt)
	}
	b.work.pushPromised(env)
	pushed = true
}

// ackPayload is what the acknowledgement of evt carries, and whether it
// answers the person in full. A slash command is answered with what
// starts, or why nothing does (commandAnswer); a modal submission that
// the person can correct, with the problem under its field
// (submissionErrors), and the modal stays open. Everything else is
// acknowledged bare. A command sent again by Slack is acknowledged bare
// too: the handler answers it, as it did before the acknowledgement could.
func (b *Bot) ackPayload(ctx context.Context, evt socketmode.Event) (any, bool) {
	switch d := evt.Data.(type) {
	case slack.SlashCommand:
		if evt.Request.RetryAttempt > 0 || b.seen.has(evt.Request.EnvelopeID) {
			return nil, false
		}
		if a, final := b.commandAnswer(d, evt.Request.EnvelopeID); a != nil {
			if p := commandPayload(a); fitsAck(p) {
				return p, final
			}
		}
	case slack.InteractionCallback:
		if d.Type != slack.InteractionTypeViewSubmission {
			return nil, false
		}
		if errs := b.submissionErrors(ctx, d); len(errs) > 0 {
			return slack.NewErrorsViewSubmissionResponse(errs), true
		}
	}
	return nil, false
}

// keep records an envelope in the inbox and returns its id there.
func (b *Bot) keep(ctx context.Context, evt socketmode.Event) (uint64, error) {
	req := evt.Request
	payload, err := scrub(req.Type, req.Payload)
	if err != nil {
		return 0, err
	}
	raw, err := json.Marshal(keptEnvelope{Type: req.Type, EnvelopeID: req.EnvelopeID, Payload: payload, RetryAttempt: req.RetryAttempt})
	if err != nil {
		return 0, err
	}
	return b.cfg.Inbox.Record(ctx, raw)
}

// scrub takes out of a payload what the inbox must not keep: Slack's
// verification token (a secret Socket Mode apps never need) and, in
// interactions, the response_urls (the bot answers clicks and submissions
// through the Web API; a slash command's response_url is kept, as the
// bot may answer the person through it, also after a restart).
func scrub(typ string, payload json.RawMessage) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(payload, &fields); err != nil {
		return nil, fmt.Errorf("envelope payload: %w", err)
	}
	delete(fields, "token")
	if typ == socketmode.RequestTypeInteractive {
		delete(fields, "response_url")
		delete(fields, "response_urls")
	}
	// Written as Slack wrote it: no \u003c for the < of a <@mention>.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fields); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// replay queues the envelopes a crash left in the inbox, oldest first, to
// be carried out like new ones. An envelope that cannot be read is logged
// (never its payload) and dropped.
func (b *Bot) replay(ctx context.Context) {
	if b.cfg.Inbox == nil {
		return
	}
	items, err := b.cfg.Inbox.Pending(ctx)
	if err != nil {
		b.cfg.Log.Error("the envelopes acknowledged before the restart cannot be read; they are not carried out", "err", err)
		return
	}
	n := 0
	for _, it := range items {
		evt, err := decodeEnvelope(it.Payload)
		if err != nil {
			b.cfg.Log.Error("an envelope acknowledged before the restart cannot be read; it is dropped", "inbox", it.ID, "err", err)
			b.finished.push(it.ID)
			continue
		}
		b.work.push(envelope{evt: evt, received: it.Received, kept: it.ID, replayed: true})
		n++
	}
	if n > 0 {
		b.cfg.Metrics.replaying(n)
		b.cfg.Log.Info("carrying out the envelopes acknowledged before the restart", "count", n)
	}
}

// done hands a kept envelope, carried out, to doneLoop.
func (b *Bot) done(env envelope) {
	if env.kept != 0 && b.cfg.Inbox != nil {
		b.finished.push(env.kept)
	}
}

// doneLoop marks the envelopes carried out done in the inbox, all those
// finished since its last write at once: the handlers never wait for it,
// and under load one write marks many. What is finished after ctx ends is
// marked by markDone when the bot has stopped.
func (b *Bot) doneLoop(ctx context.Context) {
	for {
		id, ok := b.finished.pop(ctx)
		if !ok {
			return
		}
		b.markDone(ctx, append([]uint64{id}, b.finished.drain()...))
	}
}

// markDone marks envelopes done. Should that fail, they are carried out
// again at the next start, which changes nothing.
func (b *Bot) markDone(ctx context.Context, ids []uint64) {
	if len(ids) == 0 {
		return
	}
	// Envelopes carried out during the shutdown grace are marked too.
	if err := b.cfg.Inbox.Done(context.WithoutCancel(ctx), ids...); err != nil {
		b.cfg.Log.Warn("mark envelopes done in the inbox; they will be looked at again (at the next start, or on Temporal by another replica), which applies nothing twice", "count", len(ids), "err", err)
	}
}

// decodeEnvelope reads a kept envelope back as slack-go delivers it.
func decodeEnvelope(raw []byte) (socketmode.Event, error) {
	var k keptEnvelope
	if err := json.Unmarshal(raw, &k); err != nil {
		return socketmode.Event{}, fmt.Errorf("kept envelope: %w", err)
	}
	req := &socketmode.Request{Type: k.Type, EnvelopeID: k.EnvelopeID, Payload: k.Payload, RetryAttempt: k.RetryAttempt}
	switch k.Type {
	case socketmode.RequestTypeEventsAPI:
		ev, err := slackevents.ParseEvent(k.Payload, slackevents.OptionNoVerifyToken())
		if err != nil {
			return socketmode.Event{}, fmt.Errorf("kept envelope %s: events API payload: %w", k.EnvelopeID, err)
		}
		return socketmode.Event{Type: socketmode.EventTypeEventsAPI, Data: ev, Request: req}, nil
	case socketmode.RequestTypeSlashCommands:
		var cmd slack.SlashCommand
		if err := json.Unmarshal(k.Payload, &cmd); err != nil {
			return socketmode.Event{}, fmt.Errorf("kept envelope %s: slash command: %w", k.EnvelopeID, err)
		}
		return socketmode.Event{Type: socketmode.EventTypeSlashCommand, Data: cmd, Request: req}, nil
	case socketmode.RequestTypeInteractive:
		var cb slack.InteractionCallback
		if err := json.Unmarshal(k.Payload, &cb); err != nil {
			return socketmode.Event{}, fmt.Errorf("kept envelope %s: interaction: %w", k.EnvelopeID, err)
		}
		return socketmode.Event{Type: socketmode.EventTypeInteractive, Data: cb, Request: req}, nil
	}
	return socketmode.Event{}, fmt.Errorf("kept envelope %s: unknown type %q", k.EnvelopeID, k.Type)
}

// carriedOut reports whether an envelope that may have been carried out
// already (kept before a restart, or sent again by Slack) needs nothing
// more: its decision is in the run, under the click's or the submission's
// idempotency key; it cancels an attempt that is no longer running; or it
// opens a modal with a trigger that has expired. A new envelope is never
// checked. Run starts need no check here: the engine refuses a repeated
// start key, and the bot says nothing then.
func (b *Bot) carriedOut(ctx context.Context, env envelope) bool {
	if !env.replayed && (env.evt.Request == nil || env.evt.Request.RetryAttempt == 0) {
		return false
	}
	cb, ok := env.evt.Data.(slack.InteractionCallback)
	if !ok {
		return false
	}
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		a, err := ParseAction(cb)
		if err != nil {
			return false
		}
		return b.actionCarriedOut(ctx, env, a)
	case slack.InteractionTypeViewSubmission:
		sub, err := ParseSubmission(cb)
		if err != nil {
			return false
		}
		return b.decided(ctx, sub.Ref.Run, sub.Key())
	}
	return false
}

// actionCarriedOut is carriedOut for a button click, judged by what the
// click asks for.
func (b *Bot) actionCarriedOut(ctx context.Context, env envelope, a Action) bool {
	switch a.Kind {
	case ActEdit, ActRedo, ActSaveWorkflow:
		return env.replayed && time.Since(env.received) > triggerLife
	case ActCancel:
		return b.cancelCarriedOut(ctx, a)
	case ActStart, ActCancelStart:
		// Carried out once the run no longer awaits Start.
		r, err := b.eng.Load(ctx, a.Ref.Run)
		return err == nil && !engine.AwaitingStart(r)
	case ActPause, ActResume, ActResumeCheckp:
		// Carried out when the run stands as the click asked.
		r, err := b.eng.Load(ctx, a.Ref.Run)
		return err == nil && (r.Paused == (a.Kind == ActPause) || r.Finished())
	}
	if _, ok := a.Kind.Decision(); !ok {
		return false
	}
	return b.decided(ctx, a.Ref.Run, a.Key())
}

// cancelCarriedOut reports whether the attempt a Cancel click names is no
// longer running.
func (b *Bot) cancelCarriedOut(ctx context.Context, a Action) bool {
	r, err := b.eng.Load(ctx, a.Ref.Run)
	if err != nil {
		return false
	}
	s := r.Step(a.Ref.Step)
	return s == nil || s.Status != engine.StepRunning || s.Latest() == nil || s.Latest().N != a.Ref.Attempt
}

// decided reports whether a decision with key is in the run.
func (b *Bot) decided(ctx context.Context, id engine.RunID, key string) bool {
	r, err := b.eng.Load(ctx, id)
	if err != nil {
		return false // the handler tells the person
	}
	for i := range r.Steps {
		for _, d := range r.Steps[i].Decisions {
			if d.Key == key {
				return true
			}
		}
	}
	return false
}
