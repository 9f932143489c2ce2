package temporalbackend

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// A verdict crosses history whole: every field of engine.Finished the
// workflow records with engine.Finish, the steps a route step adds too.
func TestVerdictCarriesTheFinished(t *testing.T) {
	f := engine.Finished{
		Result: engine.ResultFailed, Reason: "postcondition failed", Summary: "a PRD", Artifact: true, Size: 42,
		File: "runs/r/01-deliver-prd.attempt-1.md", CostUSD: 0.25,
		Usage:     engine.Usage{InputTokens: 1, OutputTokens: 2, CacheRead: 3, CacheCreate: 4, Turns: 5},
		Added:     []engine.PlanStep{{Skill: "deliver-prd", ID: "route.next", DependsOn: []string{"route"}, Prompt: "go on"}},
		Cancelled: true, ErrorKind: engine.AgentErrRateLimit, RateLimit: engine.RateLimit{Wait: time.Minute, Tries: 3},
		Agent: "codex",
	}
	v, err := toVerdict(f, "runs/r/01-deliver-prd.attempt-1.md")
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.finished()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, f) {
		t.Errorf("verdict round trip:\n got %+v\nwant %+v", got, f)
	}
	v.V = record.Version + 1
	if _, err := v.finished(); !errors.Is(err, record.ErrNewer) {
		t.Errorf("a verdict from a newer gonogo: got %v, want record.ErrNewer", err)
	}
}

// A refusal crosses Temporal and comes back wrapping the same sentinel,
// with the engine's message.
func TestRefusalKeepsItsSentinel(t *testing.T) {
	for _, sentinel := range []error{engine.ErrNotFound, engine.ErrStale, engine.ErrKeyReused, engine.ErrNotWaiting, engine.ErrPaused, engine.ErrNotAwaitingStart} {
		err := fmt.Errorf("step 1: %w", sentinel)
		back := fromRefusal(refusal(err))
		if !errors.Is(back, sentinel) || back.Error() != err.Error() {
			t.Errorf("%v: came back as %v (%T)", sentinel, back, back)
		}
	}
	if back := fromRefusal(refusal(fmt.Errorf("x on run r: %w", engine.ErrNotApprover))); !errors.Is(back, engine.ErrForbidden) {
		t.Errorf("ErrNotApprover no longer wraps ErrForbidden: %v", back)
	}
	if back := fromRefusal(refusal(errors.New("plain"))); back.Error() != "plain" {
		t.Errorf("a plain error came back as %v", back)
	}
}

// The journal query pages: every event once, in order, each page at most
// journalPageSize long.
func TestJournalPages(t *testing.T) {
	n := 2*journalPageSize + 7
	f := &flow{}
	for i := 1; i <= n; i++ {
		f.journal = append(f.journal, engine.Event{Seq: uint64(i), Type: engine.EvStepQueued, Step: 1, Status: engine.StepQueued})
	}
	var seqs []uint64
	pages := 0
	for from := uint64(1); from != 0; pages++ {
		p, err := f.page(from)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := record.UnmarshalEvents(p.Events)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) > journalPageSize {
			t.Fatalf("a page of %d events", len(evs))
		}
		for _, ev := range evs {
			seqs = append(seqs, ev.Seq)
		}
		from = p.Next
	}
	if pages != 3 || len(seqs) != n || seqs[0] != 1 || seqs[n-1] != uint64(n) {
		t.Errorf("%d pages, %d events (%v...): want 3 pages, %d events", pages, len(seqs), seqs[:min(3, len(seqs))], n)
	}
}
