//go:build temporal

package temporalbackend

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/hangguard"
)

// gateRunner counts the agents running at once; each runs until a token
// lets it end.
type gateRunner struct {
	mu        sync.Mutex
	now, most int
	total     int
	started   chan engine.Job
	tokens    chan struct{}
}

func (g *gateRunner) Run(ctx context.Context, job engine.Job, progress func(engine.Progress)) engine.Outcome {
	g.mu.Lock()
	g.now++
	g.total++
	g.most = max(g.most, g.now)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.now--
		g.mu.Unlock()
	}()
	g.started <- job
	select {
	case <-g.tokens:
	case <-ctx.Done():
		return engine.Outcome{Err: ctx.Err(), ExitCode: -1}
	}
	return engine.Outcome{Artifact: []byte("# " + job.Skill + "\n\nDone for " + string(job.Run) + ".\n")}
}

func (g *gateRunner) counts() (most, total int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.most, g.total
}

// GONOGO_TEMPORAL_MAX_STEPS: the runs started with a limit of 2 steps at
// once run at most 2 across the cluster's workers, however many of them
// poll the step queue and however many steps each may take; the others
// wait queued, and each step that ends lets one more start.
func TestMaxStepsHoldsAcrossWorkers(t *testing.T) {
	e := temporalEnv(t)
	queue := e.q.steps + "-limited"
	gate := &gateRunner{started: make(chan engine.Job, 8), tokens: make(chan struct{})}
	acts := &Activities{Runner: gate, Catalog: e.cat, Artifacts: e.acts.Artifacts, RateLimit: testRateLimit, Workflows: testWorkflows}
	for range 2 {
		e.worker(queue, func(r worker.Registry) { RegisterSteps(r, acts) })
	}
	b := New(e.config(func(c *Config) { c.StepQueue, c.MaxSteps = queue, 2 }))
	p, err := engine.PreflightChain(engine.ChainExpr{Source: "deliver-prd", Names: []string{"deliver-prd"}, Context: "limits"},
		e.cat, engine.DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	var ids []engine.RunID
	for range 4 {
		r, err := b.Start(t.Context(), p, engine.StartOptions{StartedBy: "U-ana"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	next := func() engine.Job {
		t.Helper()
		select {
		case j := <-gate.started:
			return j
		case <-time.After(hangguard.Limit(t)):
			t.Fatal("no further step started")
			return engine.Job{}
		}
	}
	running := map[engine.RunID]bool{next().Run: true, next().Run: true}
	// The two others wait for a slot, queued as a step past the limit of
	// steps at once is on one machine.
	var queued []engine.RunID
	for _, id := range ids {
		if !running[id] {
			waitFor(t, b, id, "queued for a slot", func(r *engine.Run) bool { return r.Step(1).Status == engine.StepQueued })
			queued = append(queued, id)
		}
	}
	// A paused run's step gives its place back: the next step that ends
	// frees a slot for the other queued run, whatever the order they
	// asked in.
	paused := queued[0]
	if _, err := b.Pause(t.Context(), paused, "U-ana"); err != nil {
		t.Fatal(err)
	}
	slotsHold(t, b, func(st slotsState) bool { return len(st.Holders) == 2 && len(st.Waiting) == 1 })
	gate.tokens <- struct{}{} // one step ends...
	if j := next(); j.Run != queued[1] {
		t.Errorf("the step of run %s started on the freed slot, want run %s's (run %s is paused)", j.Run, queued[1], paused)
	}
	running[queued[1]] = true
	if _, err := b.Unpause(t.Context(), paused, "U-ana", ""); err != nil {
		t.Fatal(err)
	}
	gate.tokens <- struct{}{}
	running[next().Run] = true
	gate.tokens <- struct{}{}
	gate.tokens <- struct{}{}
	for _, id := range ids {
		waiting(t, b, id, 1, 1)
	}
	if most, total := gate.counts(); most != 2 || total != 4 || len(running) != 4 {
		t.Errorf("%d steps ran, at most %d at once, of %d runs; want 4, at most 2, of 4", total, most, len(running))
	}
	// Every slot was given back.
	slotsHold(t, b, func(st slotsState) bool { return len(st.Holders) == 0 && len(st.Waiting) == 0 })
}

// slotsHold waits until the slots workflow of b's runs stands as ok says;
// its bound only guards against a hang.
func slotsHold(t *testing.T, b *Backend, ok func(slotsState) bool) {
	t.Helper()
	deadline := hangguard.Deadline(t)
	for {
		var st slotsState // fresh: an empty list is left out of the answer
		res, err := b.cfg.Client.QueryWorkflow(t.Context(), SlotsWorkflowID(b.cfg.TaskQueue), "", qrySlots)
		if err == nil {
			err = res.Get(&st)
		}
		if err == nil && ok(st) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slots workflow stands as %+v (%v)", st, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
