package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// leanStore is the least a Store does: keep each run as committed (runs
// are values the engine never changes once folded) and the artifacts. It
// makes the engine's own cost per step visible. It keeps no journal, keys,
// artifact versions or notes, so it does not keep the whole Store contract
// (memStore does): it is for this benchmark only.
type leanStore struct {
	mu   sync.Mutex
	runs map[RunID]*Run
	arts map[artKey][]byte
}

func (l *leanStore) Commit(_ context.Context, c Commit) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.runs[c.Run.ID]; ok && cur.Seq != c.After {
		return fmt.Errorf("run %s moved on: %w", c.Run.ID, ErrStale)
	}
	l.runs[c.Run.ID] = c.Run
	for _, a := range c.Artifacts {
		l.arts[artKey{c.Run.ID, a.Step, a.Attempt}] = a.Body
	}
	return nil
}

func (l *leanStore) Load(_ context.Context, id RunID) (*Run, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r, ok := l.runs[id]; ok {
		return r, nil
	}
	return nil, ErrNotFound
}

func (l *leanStore) Artifact(_ context.Context, id RunID, step, attempt int) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.arts[artKey{id, step, attempt}]; ok {
		return b, nil
	}
	return nil, ErrNotFound
}

func (l *leanStore) List(context.Context) ([]RunSummary, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]RunSummary, 0, len(l.runs))
	for _, r := range l.runs {
		out = append(out, r.Summary())
	}
	slices.SortFunc(out, func(a, b RunSummary) int { return strings.Compare(string(b.ID), string(a.ID)) })
	return out, nil
}

// Notes and SetNotes refuse: nothing the benchmark runs keeps notes.
func (l *leanStore) Notes(context.Context, RunID) (map[string]string, error) {
	return nil, errors.New("the benchmark's store keeps no notes")
}

func (l *leanStore) SetNotes(context.Context, RunID, map[string]string) error {
	return errors.New("the benchmark's store keeps no notes")
}

type instantRunner struct{}

func (instantRunner) Run(context.Context, Job, func(Progress)) Outcome {
	return Outcome{Artifact: []byte("# Done\n\nA paragraph of real work, long enough to count as produced.\n")}
}

// finishedSignal tells when a run has finished.
type finishedSignal chan RunID

func (f finishedSignal) Notify(n Notice) {
	if n.Event.Type == EvRunFinished {
		f <- n.Run.ID
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// wideWorkflow is n steps in levels of 20: each step after the first level
// depends on two steps of the level before it, and reads one of their
// outputs.
func wideWorkflow(b *testing.B, n int, cat Catalog) Plan {
	w := WorkflowSpec{Name: "wide"}
	for i := range n {
		s := WorkflowStep{ID: "s" + strconv.Itoa(i), Skill: "deliver-prd", Gate: GateNever, Line: i + 1}
		if i >= 20 {
			a, c := i-20, i-20+(i+1)%20
			if c >= i/20*20 {
				c -= 20
			}
			s.DependsOn = []string{"s" + strconv.Itoa(a), "s" + strconv.Itoa(c)}
			s.Prompt = "Build on {{steps.s" + strconv.Itoa(a) + ".output}}"
		}
		w.Steps = append(w.Steps, s)
	}
	p, err := PreflightWorkflow(w, nil, "", Flags{Auto: true}, cat, DefaultPolicy())
	if err != nil {
		b.Fatal(err)
	}
	if levels := WorkflowLevels(p); len(levels) != n/20 || len(levels[0]) != 20 {
		b.Fatalf("%d levels, the first of %d steps", len(levels), len(levels[0]))
	}
	return p
}

// BenchmarkWorkflowEngineTimePerStep runs a 200-step workflow (levels of
// 20 parallel steps, 20 runner slots) and, in the same run, enough 3-step
// chains to make 200 steps, both in guarded auto with an instant runner
// and a store that costs nothing, and reports the engine's own CPU time
// per step for each and their ratio (x-workflow-vs-chain: the target is at
// most 2). CPU time, not wall time, so the workflow's parallel steps do not
// flatter it.
func BenchmarkWorkflowEngineTimePerStep(b *testing.B) {
	cat := testCatalog(true)
	wide := wideWorkflow(b, 200, cat)
	chain, err := PreflightChain(ChainExpr{Source: "3 steps", Names: []string{"deliver-prd", "deliver-user-stories", "define-problem-statement"}, Flags: Flags{ForceAuto: true}}, cat, DefaultPolicy())
	if err != nil {
		b.Fatal(err)
	}
	measure := func(p Plan, runs int) (cpu, wall time.Duration) {
		done := make(finishedSignal, runs)
		svc, stop := startService(b, ServiceConfig{Store: &leanStore{runs: map[RunID]*Run{}, arts: map[artKey][]byte{}},
			Catalog: cat, Runner: instantRunner{}, Notifier: done, MaxParallel: 20})
		defer stop()
		c0, w0 := cpuTime(), time.Now()
		for range runs {
			if _, err := svc.Start(context.Background(), p, StartOptions{StartedBy: "bench"}); err != nil {
				b.Fatal(err)
			}
			<-done
		}
		return cpuTime() - c0, time.Since(w0)
	}
	var wfCPU, chCPU, wfWall, chWall time.Duration
	for b.Loop() {
		c, w := measure(wide, 1)
		wfCPU, wfWall = wfCPU+c, wfWall+w
		c, w = measure(chain, 67)
		chCPU, chWall = chCPU+c, chWall+w
	}
	per := func(d time.Duration, steps int) float64 { return float64(d.Nanoseconds()) / float64(b.N*steps) }
	b.ReportMetric(per(wfCPU, 200), "wf-cpu-ns/step")
	b.ReportMetric(per(chCPU, 201), "chain-cpu-ns/step")
	b.ReportMetric(per(wfCPU, 200)/per(chCPU, 201), "x-workflow-vs-chain")
	b.ReportMetric(per(wfWall, 200)/per(chWall, 201), "x-wall-workflow-vs-chain")
}
