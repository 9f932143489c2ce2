package storage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
)

// realisticPlan is the size of a real three-step plan: prompts of a couple
// of kilobytes, a shared context, manual and deferred blocks.
func realisticPlan() engine.Plan {
	p := testPlan(3)
	para := strings.Repeat("Customers abandon the mobile checkout at the address step; cut it to one screen. ", 20)
	p.Context = para
	for i := range p.Steps {
		p.Steps[i].Prompt = fmt.Sprintf("Step %d. %s", i+1, para)
	}
	for i := range 3 {
		p.Deferred = append(p.Deferred, engine.Block{Effort: fmt.Sprintf("deferred %d", i), PTokens: []string{"P5"}, Skill: "deliver-prd", Prompt: para})
	}
	return p
}

func realisticArtifact() []byte {
	var b strings.Builder
	b.WriteString("# Product requirements: one-screen mobile checkout\n\n")
	for i := range 40 {
		fmt.Fprintf(&b, "## Requirement %d\n\nThe address form keeps what the customer typed when validation fails, and says which field is wrong in words.\n\n", i+1)
	}
	return []byte(b.String())
}

// transitionCommits prepares n commits, each one durable step transition of
// a realistic run (a step starting, then the same step finishing with its
// artifact), against runs already in db.
func transitionCommits(b *testing.B, db *DB, n int, withFiles bool) []engine.Commit {
	b.Helper()
	plan, body := realisticPlan(), realisticArtifact()
	c := newClock()
	var out []engine.Commit
	db.bolt.NoSync = true // setting up is not what is measured
	defer func() { db.bolt.NoSync = false }()
	for i := 0; len(out) < n; i++ {
		id := engine.RunID(fmt.Sprintf("bench-%s-%06d", map[bool]string{false: "db", true: "file"}[withFiles], i))
		evs, err := engine.NewRun(id, plan, engine.StartOptions{StartedBy: "U123", Origin: engine.Origin{Channel: "C1", Thread: "1.2"}}, c.now())
		if err != nil {
			b.Fatal(err)
		}
		run, _ := engine.Fold(&engine.Run{}, evs)
		if err := db.Commit(context.Background(), engine.Commit{Run: run, Events: evs}); err != nil {
			b.Fatal(err)
		}
		evs, _ = engine.Start(run, 1, c.now())
		started, _ := engine.Fold(run, evs)
		out = append(out, engine.Commit{Run: started, Events: evs, After: run.Seq})

		file := engine.ArtifactFile(id, 1, "skill-1", 1, true)
		f := engine.Finished{Result: engine.ResultProduced, Summary: "one-screen checkout PRD", Artifact: true,
			Size: len(body), File: file, CostUSD: 0.42, Usage: engine.Usage{InputTokens: 18000, OutputTokens: 4200, Turns: 7}}
		evs, _ = engine.Finish(started, 1, 1, f, c.now())
		finished, _ := engine.Fold(started, evs)
		fc := engine.Commit{Run: finished, Events: evs, After: started.Seq,
			Artifacts: []engine.ArtifactWrite{{Step: 1, Attempt: 1, Body: body}}}
		if withFiles {
			fc.Files = []engine.FileWrite{{Path: file, Body: body}}
		}
		out = append(out, fc)
	}
	return out[:n]
}

// committedBytes is what a commit puts into the file: every key and value.
func committedBytes(b *testing.B, c engine.Commit) int {
	p, err := encodeCommit(c)
	if err != nil {
		b.Fatal(err)
	}
	n := len(p.id)*3 + len(p.snap) + len(p.summary) + len(p.plan) + len(p.key) + len(p.keyRec)
	for i := range p.events {
		n += len(p.seqs[i]) + len(p.events[i])
	}
	for _, a := range p.arts {
		n += 12 + len(a.Body)
	}
	return n
}

// BenchmarkTransition measures one durable step transition against the
// cheapest durable write of the same size: a bare, fsynced bbolt Update
// putting as many bytes, timed in the same loop on the same disk. x-bare is
// the ratio of their mean times, leaving out the slowest tenth of each.
// with-files adds the artifact file (its body written to a file renamed
// into place, no fsync: the store is the truth). The empty file and run
// folder the store makes ahead for the next artifact file (see ahead) are
// made between transitions, as between real ones, which are minutes
// apart: the loop waits for them outside both timings, so they slow
// neither, and x-bare-ahead adds that wait to the transition. The fsyncs
// that later make the files durable are timed at the end, as Close makes
// them, and spread over the transitions in x-bare-synced: a bound, since
// the files are still dirty then, where the batch made once they are
// syncAfter old finds them mostly written.
func BenchmarkTransition(b *testing.B) {
	for _, withFiles := range []bool{false, true} {
		name := map[bool]string{false: "db-only", true: "with-files"}[withFiles]
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			db, err := Open(dir, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			bare, err := bbolt.Open(filepath.Join(b.TempDir(), "bare.db"), 0o600, &bbolt.Options{FreelistType: bbolt.FreelistMapType})
			if err != nil {
				b.Fatal(err)
			}
			defer bare.Close()
			if err := bare.Update(func(tx *bbolt.Tx) error { _, err := tx.CreateBucket([]byte("bare")); return err }); err != nil {
				b.Fatal(err)
			}
			commits := transitionCommits(b, db, b.N, withFiles)
			sizes := make([]int, len(commits))
			for i, c := range commits {
				sizes[i] = committedBytes(b, c)
			}
			payload := make([]byte, 1<<20)

			storeTimes := make([]time.Duration, b.N)
			aheadTimes := make([]time.Duration, b.N) // the transition and the wait for what it made ahead
			bareTimes := make([]time.Duration, b.N)
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				if err := db.Commit(context.Background(), commits[i]); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				db.files.ahead.settle()
				t2 := time.Now()
				err := bare.Update(func(tx *bbolt.Tx) error {
					return tx.Bucket([]byte("bare")).Put(seqKey(uint64(i)), payload[:sizes[i]-8])
				})
				if err != nil {
					b.Fatal(err)
				}
				storeTimes[i], aheadTimes[i], bareTimes[i] = t1.Sub(t0), t2.Sub(t0), time.Since(t2)
			}
			b.StopTimer()
			// The batch sync the files are owed, as Close would make it.
			t0 := time.Now()
			db.fileMu.Lock()
			err = db.syncFiles(db.unsynced())
			db.fileMu.Unlock()
			if err != nil {
				b.Fatal(err)
			}
			synced := (trimmedMean(storeTimes) + float64(time.Since(t0).Nanoseconds())/float64(b.N)) / trimmedMean(bareTimes)
			total := 0
			for _, s := range sizes {
				total += s
			}
			// The disk is shared and fsync times come in bursts: the ratio
			// leaves out the slowest tenth of each series.
			b.ReportMetric(mean(storeTimes), "ns/op")
			b.ReportMetric(mean(bareTimes), "bare-ns/op")
			b.ReportMetric(trimmedMean(storeTimes)/trimmedMean(bareTimes), "x-bare")
			if withFiles {
				b.ReportMetric(trimmedMean(aheadTimes)/trimmedMean(bareTimes), "x-bare-ahead")
				b.ReportMetric(synced, "x-bare-synced")
			}
			b.ReportMetric(float64(total)/float64(b.N), "B/commit")
		})
	}
}

// trimmedMean is the mean of all but the slowest tenth.
func trimmedMean(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return mean(s[:max(1, len(s)*9/10)])
}

func mean(ds []time.Duration) float64 {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return float64(sum.Nanoseconds()) / float64(len(ds))
}

// The 10,000-run store is built once per test binary: building it takes
// longer than opening it, which is what is measured.
var (
	bigStoreOnce sync.Once
	bigStoreDir  string
	bigStoreErr  error
)

const (
	bigRuns    = 10000
	bigRunning = 10 // runs left with a step running, for recovery to find
)

// bigStore builds a store of 10,000 runs and 50,000 journal events: half
// completed, half waiting for their second step, and a few with a step
// running. It is written with NoSync and without file writes.
func bigStore(tb testing.TB) string {
	bigStoreOnce.Do(func() {
		bigStoreDir, bigStoreErr = os.MkdirTemp("", "gonogo-bench-10k-")
		if bigStoreErr != nil {
			return
		}
		bigStoreErr = buildBigStore(bigStoreDir)
	})
	if bigStoreErr != nil {
		tb.Fatalf("build the 10k store: %v", bigStoreErr)
	}
	// Each user gets its own copy, so recovery runs on every first open.
	dir := tb.TempDir()
	src, err := os.ReadFile(filepath.Join(bigStoreDir, FileName))
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), src, 0o600); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func buildBigStore(dir string) error {
	db, err := Open(dir, Options{NoSync: true})
	if err != nil {
		return err
	}
	defer db.Close()
	c := newClock()
	body := []byte(strings.Repeat("An artifact of a few kilobytes, as agents write them.\n", 60))
	one, two := testPlan(1), testPlan(2)
	const batch = 500
	var pending []*prepared
	flush := func() error {
		err := db.update(func(tx *bbolt.Tx) error {
			for _, p := range pending {
				if _, err := commitTx(tx, p); err != nil {
					return err
				}
			}
			return nil
		})
		pending = pending[:0]
		return err
	}
	for i := range bigRuns {
		id := engine.RunID(fmt.Sprintf("r%06d", i))
		plan := one
		if i%2 == 1 {
			plan = two
		}
		var run = &engine.Run{}
		commit := func(evs []engine.Event, err error, arts []engine.ArtifactWrite) error {
			if err != nil {
				return err
			}
			after, err := engine.Fold(run, evs)
			if err != nil {
				return err
			}
			p, err := encodeCommit(engine.Commit{Run: after, Events: evs, After: run.Seq, Artifacts: arts})
			if err != nil {
				return err
			}
			pending = append(pending, p)
			run = after
			return nil
		}
		step := func(evs []engine.Event, err error) error { return commit(evs, err, nil) }
		withArtifact := func(evs []engine.Event, err error) error {
			return commit(evs, err, []engine.ArtifactWrite{{Step: 1, Attempt: 1, Body: body}})
		}
		approve := func() ([]engine.Event, error) {
			return engine.Decide(run, engine.Decision{Kind: engine.DecideApprove, Actor: "U1", Step: 1, Attempt: 1, Key: fmt.Sprintf("k%06d", i)}, nil, c.now())
		}
		errs := []error{
			step(engine.NewRun(id, plan, engine.StartOptions{StartedBy: "U1"}, c.now())),
			step(engine.Start(run, 1, c.now())),
			withArtifact(engine.Finish(run, 1, 1, engine.Finished{Result: engine.ResultProduced, Artifact: true, Size: len(body)}, c.now())),
			step(approve()), // a one-step run completes here: decision and run-finished
		}
		if i%2 == 1 {
			if i%(bigRuns/bigRunning) == 1 {
				errs = append(errs, step(engine.Start(run, 2, c.now())))
			} else {
				errs = append(errs, step(engine.Queue(run, 2, c.now())))
			}
		}
		for _, err := range errs {
			if err != nil {
				return fmt.Errorf("run %s: %w", id, err)
			}
		}
		if run.Seq != 5 {
			return fmt.Errorf("run %s has %d events, want 5", id, run.Seq)
		}
		if len(pending) >= batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// BenchmarkReopen10k times Open and Close of a store of 10,000 runs and
// 50,000 journal events. first-open-ms is the first Open, which also
// recovers the runs that had a step running.
func BenchmarkReopen10k(b *testing.B) {
	dir := bigStore(b)
	t0 := time.Now()
	db, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	first := time.Since(t0)
	if n := len(db.recovered); n != bigRunning {
		b.Fatalf("first open recovered %d runs, want %d", n, bigRunning)
	}
	db.Close()

	b.ResetTimer()
	for range b.N {
		db, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	b.ReportMetric(float64(first.Microseconds())/1000, "first-open-ms")
}

// BenchmarkList10k times listing the 10,000-run store.
func BenchmarkList10k(b *testing.B) {
	db, err := Open(bigStore(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	b.ResetTimer()
	for range b.N {
		list, err := db.List(context.Background())
		if err != nil || len(list) != bigRuns {
			b.Fatalf("List: %d runs, %v", len(list), err)
		}
	}
}

// TestTenThousandRuns checks the large store for what the benchmarks time:
// recovery touches only the running runs and List sees every run, newest
// first. It is slow, so it runs only with GONOGO_LONG=1.
func TestTenThousandRuns(t *testing.T) {
	if os.Getenv("GONOGO_LONG") != "1" {
		t.Skip("set GONOGO_LONG=1 to build and check a store of 10,000 runs")
	}
	dir := bigStore(t)
	db := openStore(t, dir, Options{})
	rec := db.recovered
	if len(rec) != bigRunning {
		t.Fatalf("recovered %d runs, want %d", len(rec), bigRunning)
	}
	for _, id := range rec {
		r, err := db.Load(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Step(2).Status != engine.StepInterrupted || r.Seq != 6 {
			t.Fatalf("run %s after recovery: step 2 %s, seq %d", id, r.Step(2).Status, r.Seq)
		}
	}
	list, err := db.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != bigRuns || list[0].ID != engine.RunID(fmt.Sprintf("r%06d", bigRuns-1)) || list[bigRuns-1].ID != "r000000" {
		t.Fatalf("List: %d runs from %s to %s", len(list), list[0].ID, list[len(list)-1].ID)
	}
	events := 0
	db.bolt.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketJournal).ForEachBucket(func(k []byte) error {
			events += tx.Bucket(bucketJournal).Bucket(k).Stats().KeyN
			return nil
		})
	})
	if events != 5*bigRuns+bigRunning {
		t.Fatalf("%d journal events, want %d", events, 5*bigRuns+bigRunning)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bigStoreDir != "" {
		os.RemoveAll(bigStoreDir)
	}
	os.Exit(code)
}
