package temporalbackend

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

const (
	// stepBeatEvery is the longest a running step goes without a
	// heartbeat: a cancel (an abort, a person's cancel) reaches its agent
	// in a heartbeat's answer, so within about this long.
	stepBeatEvery = time.Second
	// stepBeatRPC bounds one heartbeat call. A call that fails is not the
	// end of the attempt: the next one is sent on the next beat, and only
	// the cluster, after the heartbeat timeout, decides that the worker is
	// lost.
	stepBeatRPC = 10 * time.Second
)

// stepBeat sends a running step's heartbeats itself, through the worker's
// client, instead of through activity.RecordHeartbeat. The SDK holds
// heartbeats back to 0.8 of the heartbeat timeout, so a cancel would
// reach the agent only after up to 8 s with the default timeout; and it
// takes one heartbeat call that did not go through within that hold (as
// short as 1 s) for a lost attempt and stops the agent, so a cluster
// that is slow for a moment would interrupt live steps. Here a beat
// leaves every stepBeatEvery (or third of the timeout, when shorter); an
// answer that the attempt was cancelled, or that the cluster no longer
// has it (it was timed out, its run ended), stops the agent; any other
// failure is logged and the next beat tried.
type stepBeat struct {
	ctx     context.Context
	stopRun context.CancelFunc
	client  client.Client
	token   []byte
	started time.Time
	mu      sync.Mutex
	last    progressRecord
	done    chan struct{}
	wg      sync.WaitGroup
}

// newStepBeat starts the heartbeats of the step activity running on ctx
// and returns the context its agent runs on: one that ends when ctx does
// or when a heartbeat's answer says the attempt is over.
func newStepBeat(ctx context.Context) (context.Context, *stepBeat) {
	runCtx, stopRun := context.WithCancel(ctx)
	info := activity.GetInfo(ctx)
	h := &stepBeat{ctx: ctx, stopRun: stopRun, client: activity.GetClient(ctx), token: info.TaskToken,
		started: time.Now(), last: progressRecord{V: record.Version}, done: make(chan struct{})}
	every := stepBeatEvery
	if t := info.HeartbeatTimeout / 3; t > 0 && t < every {
		every = t
	}
	h.wg.Go(func() {
		repeat(runCtx, h.done, every, func() bool {
			over := h.beat()
			if over {
				h.stopRun()
			}
			return over
		})
	})
	return runCtx, h
}

// repeat calls fn every d until done is closed, ctx ends or fn says to
// stop.
func repeat(ctx context.Context, done <-chan struct{}, d time.Duration, fn func() (stop bool)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if fn() {
			return
		}
	}
}

// beat sends the latest progress and reports whether the attempt is over.
func (h *stepBeat) beat() (over bool) {
	h.mu.Lock()
	p := h.last
	h.mu.Unlock()
	ctx, cancel := context.WithTimeout(h.ctx, stepBeatRPC)
	defer cancel()
	err := h.client.RecordActivityHeartbeat(ctx, h.token, p)
	var gone *serviceerror.NotFound
	switch {
	case err == nil:
		return false
	case temporal.IsCanceledError(err), errors.As(err, &gone):
		return true
	case h.ctx.Err() != nil:
		return false
	}
	activity.GetLogger(h.ctx).Warn("a step's heartbeat was not recorded; the next is sent in a moment", "err", err)
	return false
}

// progress keeps the agent's latest progress for the next beat.
func (h *stepBeat) progress(p engine.Progress) {
	if p.Elapsed == 0 {
		p.Elapsed = time.Since(h.started)
	}
	rec := progressRecord{V: record.Version, Turns: p.Turns, ToolCalls: p.ToolCalls, LastTool: p.LastTool,
		Status: p.Status, CostUSD: p.CostUSD, ElapsedNS: int64(p.Elapsed)}
	h.mu.Lock()
	h.last = rec
	h.mu.Unlock()
}

func (h *stepBeat) stop() {
	close(h.done)
	h.wg.Wait()
	h.stopRun()
}
