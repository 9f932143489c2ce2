package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// SyncThread brings run id's thread up to date once, for a backend that
// schedules syncs itself (Config.ScheduledSyncs): at most one at a time
// for a run, across every replica. retried says an earlier attempt of
// this sync was cut off (its replica died): the messages and files it may
// have posted without noting them are looked for in Slack first, by their
// metadata and titles, so none is posted twice. later > 0 asks for
// another sync after that long (a rate limit or the update budget put a
// change off, or the thread's loading status is due for a refresh); done
// says the thread shows the run's end in full.
func (b *Bot) SyncThread(ctx context.Context, id engine.RunID, retried bool) (later time.Duration, done bool, err error) {
	done, err = b.syncRun(ctx, id, retried)
	var put *laterError
	if errors.As(err, &put) {
		return max(time.Until(put.until), time.Millisecond), false, nil
	}
	return 0, done, err
}

// CarryOut carries out an envelope kept in the inbox whose replica did not
// mark it done in time (it died, or is stuck): as an envelope kept before
// a restart is, so what was applied already is not applied again
// (carriedOut). An envelope that cannot be read is logged (never its
// payload) and dropped: asking again would not make it readable.
func (b *Bot) CarryOut(ctx context.Context, payload []byte, received time.Time) error {
	evt, err := decodeEnvelope(payload)
	if err != nil {
		b.cfg.Log.Error("an envelope another replica acknowledged cannot be read; it is dropped", "err", err)
		return nil
	}
	env := envelope{evt: evt, received: received, replayed: true}
	if evt.Request != nil && !b.seen.add(evt.Request.EnvelopeID) {
		return nil // this replica carried it out already
	}
	if b.carriedOut(ctx, env) {
		return nil
	}
	b.cfg.Log.Info("carrying out an envelope whose replica did not finish it in time", "envelope", evt.Request.EnvelopeID)
	hctx, c := withCarrying(ctx, true)
	hctx, cancel := b.handleLimit(hctx)
	b.handleSafely(hctx, env)
	cancel()
	b.logHandled(env, c)
	if c.again {
		b.seen.forget(evt.Request.EnvelopeID)
		return errCarryAgain
	}
	return ctx.Err()
}

// carrying is what carrying out one envelope found: that it must be
// carried out again (a decision the cluster could not record yet).
type carrying struct {
	again    bool
	replayed bool // carried out before: the person was told
}

type carryingKey struct{}

// withCarrying gives the handling of one envelope a carrying to report
// on; replayed says the envelope was carried out before.
func withCarrying(ctx context.Context, replayed bool) (context.Context, *carrying) {
	c := &carrying{replayed: replayed}
	return context.WithValue(ctx, carryingKey{}, c), c
}

// retry marks the envelope being carried out under ctx to be carried out
// again, and reports whether this is the first time it failed (the person
// is to be told).
func retry(ctx context.Context) (first bool) {
	c, ok := ctx.Value(carryingKey{}).(*carrying)
	if !ok {
		return true
	}
	c.again = true
	return !c.replayed
}

// handleLimit bounds the carrying out of one envelope on a cluster: a
// decision the cluster has not recorded within it is carried out again
// (retry) rather than hold one of the bot's handlers.
func (b *Bot) handleLimit(ctx context.Context) (context.Context, context.CancelFunc) {
	if !b.cfg.ScheduledSyncs {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, clusterHandleLimit)
}

// carryAgain queues again, after a wait, an envelope to be carried out
// again that the inbox does not hold (it could not keep it): no other
// replica knows of it, so this one tries again, waiting as the inbox's
// own retries do (1 s, doubling up to 30 s) and giving up after as many
// tries. The person was told at the first failure that it is tried again
// (notYet), and is not told again.
func (b *Bot) carryAgain(env envelope) {
	env.tries++
	if env.tries >= unkeptTries {
		b.cfg.Log.Error("an envelope the inbox could not keep was tried too often; it is given up",
			"type", env.evt.Type, "tries", env.tries)
		return
	}
	env.replayed = true // what a try did is looked for first (carriedOut)
	wait := min(time.Second<<(env.tries-1), 30*time.Second)
	time.AfterFunc(wait, func() { b.work.push(env) })
}

// unkeptTries bounds carryAgain, as temporalbackend's carryAttempts bounds
// the inbox's retries.
const unkeptTries = 10

// clusterHandleLimit is handleLimit's bound: about when another replica
// would carry the envelope out anyway (temporalbackend's RecoverAfter).
const clusterHandleLimit = 45 * time.Second

// errCarryAgain is CarryOut's answer for an envelope to carry out again.
var errCarryAgain = errors.New("the envelope could not be carried out yet (the cluster did not record its change); it is tried again")

// EnvelopeKey names a kept envelope (as the inbox is given it): Slack's
// envelope id, the same on every connection Slack sends it to.
func EnvelopeKey(payload []byte) (string, error) {
	var k keptEnvelope
	if err := json.Unmarshal(payload, &k); err != nil {
		return "", fmt.Errorf("kept envelope: %w", err)
	}
	if k.EnvelopeID == "" {
		return "", errors.New("kept envelope: no envelope_id")
	}
	return k.EnvelopeID, nil
}
