package storage

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// waitingRuns is how many runs BenchmarkMemoryPerWaitingRun leaves waiting
// at a checkpoint.
const waitingRuns = 2000

// BenchmarkMemoryPerWaitingRun measures the heap the store and the engine
// hold for each run waiting at a checkpoint (the target is under
// 20 KB a run). A live engine.Service on an open store starts 2,000
// checkpointed runs of the realistic three-step plan; an instant runner
// gives each first step a 5 KB artifact, and every run then waits for a
// decision. The store's run listing is loaded first, as `gonogo serve`
// loads it at start (catch-up, /metrics), so its cache of summaries is
// part of what is measured.
//
// The floor, measured in the same run, is the same live store and service
// holding no run: bytes/run is (heap with the runs - floor) / runs, after
// a full collection each time. What bbolt keeps in its memory map is not
// heap and is not counted. Each loop iteration is one reading of the heap.
func BenchmarkMemoryPerWaitingRun(b *testing.B) {
	ctx := context.Background()
	db, err := Open(b.TempDir(), Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	svc := engine.NewService(engine.ServiceConfig{Store: db, Catalog: benchCatalog{}, Runner: instantRunner{body: realisticArtifact()}, MaxParallel: 16})
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- svc.Run(runCtx) }()
	defer func() { stop(); <-ran }()
	if _, err := svc.List(ctx); err != nil {
		b.Fatal(err)
	}
	floor := liveHeap()

	plan := realisticPlan()
	for i := range waitingRuns {
		opt := engine.StartOptions{StartedBy: "U123", Origin: engine.Origin{Channel: "C1"}, Key: fmt.Sprintf("bench-start-%d", i)}
		if err := startRetrying(ctx, svc, plan, opt); err != nil {
			b.Fatal(err)
		}
	}
	waitAllWaiting(b, svc, waitingRuns)

	held := liveHeap()
	for b.Loop() {
		// One collection a reading: the readings before this one already
		// emptied what outlives one collection.
		runtime.GC()
		held = min(held, heapAlloc())
	}
	b.StopTimer()
	perRun := (float64(held) - float64(floor)) / waitingRuns
	b.ReportMetric(perRun, "bytes/run")
	b.ReportMetric(perRun/(20<<10), "bytes/run/20KB")
	b.ReportMetric(float64(floor), "floor-bytes")
	b.ReportMetric(0, "ns/op") // an op is one reading of the heap
}

// startRetrying starts a run, trying again when the new run's id was
// already taken: ids are the second plus 24 random bits, so among the
// thousands of runs started in the same second here two can draw the
// same id, and the store refuses the second as stale.
func startRetrying(ctx context.Context, svc *engine.Service, p engine.Plan, opt engine.StartOptions) error {
	for try := 0; ; try++ {
		_, err := svc.Start(ctx, p, opt)
		if err == nil || !errors.Is(err, engine.ErrStale) || try == 3 {
			return err
		}
	}
}

// waitAllWaiting waits until every one of the n runs in the store waits
// for a decision at step 1 with a produced artifact.
func waitAllWaiting(b *testing.B, svc *engine.Service, n int) {
	b.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for {
		list, err := svc.List(ctx)
		if err != nil {
			b.Fatal(err)
		}
		waiting := 0
		for _, s := range list {
			if s.State == engine.RunWaiting {
				waiting++
			}
		}
		if len(list) == n && waiting == n {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d runs waiting after a minute", waiting, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// What waits must be a checkpoint on a produced artifact, not a halt.
	list, _ := svc.List(ctx)
	r, err := svc.Load(ctx, list[0].ID)
	if err != nil {
		b.Fatal(err)
	}
	if st := r.Step(1); st.Status != engine.StepWaiting || st.Latest().Result != engine.ResultProduced {
		b.Fatalf("run %s step 1 is %s with result %q, want a checkpoint on a produced artifact", r.ID, st.Status, st.Latest().Result)
	}
}

// liveHeap returns the bytes of live heap objects. Two collections: the
// second frees what the first only made unreachable (sync.Pool victims,
// finalized objects).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	return heapAlloc()
}

// heapAlloc returns the bytes of heap objects not yet freed.
func heapAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// instantRunner answers every attempt at once with body.
type instantRunner struct{ body []byte }

func (r instantRunner) Run(_ context.Context, _ engine.Job, _ func(engine.Progress)) engine.Outcome {
	return engine.Outcome{Artifact: r.body, CostUSD: 0.01}
}

// benchCatalog has every skill the test plans name.
type benchCatalog struct{}

func (benchCatalog) Skill(name string) (engine.Skill, error) {
	return engine.Skill{Name: name, Instructions: "Write the " + name + " artifact."}, nil
}
func (benchCatalog) Names() []string { return []string{"skill-1", "skill-2", "skill-3"} }
func (benchCatalog) Agent(name string) (string, error) {
	return "", fmt.Errorf("agent %s: %w", name, engine.ErrNotFound)
}
