package main

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
	"github.com/gonogo/gonogo/storage"
)

// instantRunner answers every step at once with a small artifact.
type instantRunner struct{}

func (instantRunner) Run(context.Context, engine.Job, func(engine.Progress)) engine.Outcome {
	return engine.Outcome{Artifact: []byte("# Result\n\nA finished artifact with real words in it.\n")}
}

// doneNotifier counts runs down as they finish.
type doneNotifier struct{ wg *sync.WaitGroup }

func (n *doneNotifier) Notify(x engine.Notice) {
	if x.Event.Type == engine.EvRunFinished {
		n.wg.Done()
	}
}

// BenchmarkConcurrentGuardedAutoRuns starts 1,000 guarded-auto runs of three
// steps at once on a real bbolt store (fsynced) with an instant runner, and
// waits for all of them to complete. It reports the total time of one
// campaign and the allocations per step; the engine's own cost is what
// remains beside the store's fsyncs.
func BenchmarkConcurrentGuardedAutoRuns(b *testing.B) {
	const runs, steps = 1000, 3
	cat := parse.NewCatalog([]engine.Skill{{Name: "a"}, {Name: "b"}, {Name: "c"}})
	plan := engine.Plan{
		Input: engine.InputPlan, Source: "bench.md", Domain: engine.DomainComplicated, DomainSource: "section-2",
		Flags: engine.Flags{Auto: true},
		Steps: []engine.PlanStep{
			{Skill: "a", Prompt: "do a", Category: engine.CategoryContent, Execution: engine.ExecDelegate},
			{Skill: "b", Prompt: "do b", Category: engine.CategoryContent, Execution: engine.ExecDelegate},
			{Skill: "c", Prompt: "do c", Category: engine.CategoryContent, Execution: engine.ExecDelegate},
		},
	}
	var mallocs uint64
	var ms runtime.MemStats
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := storage.Open(b.TempDir(), storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(runs)
		svc := engine.NewService(engine.ServiceConfig{Store: db, Catalog: cat, Runner: instantRunner{},
			Notifier: &doneNotifier{wg: &wg}, MaxParallel: 8})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = svc.Run(ctx); close(done) }()
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		b.StartTimer()
		var start sync.WaitGroup
		errs := make(chan error, runs)
		for r := 0; r < runs; r++ {
			start.Add(1)
			go func() {
				defer start.Done()
				if _, err := svc.Start(ctx, plan, engine.StartOptions{StartedBy: "bench"}); err != nil {
					errs <- err
				}
			}()
		}
		start.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		wg.Wait()
		b.StopTimer()
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs - before
		cancel()
		<-done
		list, err := db.List(context.Background())
		if err != nil || len(list) != runs {
			b.Fatalf("%d runs listed (%v)", len(list), err)
		}
		for _, s := range list {
			if s.State != engine.RunCompleted || s.StepsDone != steps {
				b.Fatalf("run %s is %s with %d/%d steps", s.ID, s.State, s.StepsDone, steps)
			}
		}
		_ = db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/campaign")
	b.ReportMetric(float64(mallocs)/float64(b.N*runs*steps), "allocs/step")
}
