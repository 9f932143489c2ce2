package datadir

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// selfDecider is a reader that carries out its runs itself, as a Temporal
// cluster's reader does: it embeds NoStore for the reading only.
type selfDecider struct{ NoStore }

func (selfDecider) Decide(context.Context, engine.RunID, engine.Decision) (*engine.Run, bool, error) {
	return &engine.Run{}, true, nil
}
func (selfDecider) Pause(context.Context, engine.RunID, string) (*engine.Run, bool, error) {
	return &engine.Run{}, true, nil
}
func (selfDecider) Unpause(context.Context, engine.RunID, string, engine.Mode) (*engine.Run, bool, error) {
	return &engine.Run{}, true, nil
}
func (selfDecider) Where() string    { return "on the test cluster" }
func (selfDecider) Describe() string { return "the test cluster" }

// A reader that decides itself takes the decisions, held; a data
// directory without a store is not held and cannot be paused; where a
// missing run is, and who holds the runs, are the reader's own words.
func TestOpenDeciderByReader(t *testing.T) {
	rd := selfDecider{}
	dc, held, err := OpenDecider(rd, "d")
	if err != nil || !held || dc != Decider(rd) {
		t.Fatalf("self-deciding reader: %v, held %v, %T", err, held, dc)
	}
	if got := Where(dc, "d"); got != "on the test cluster" {
		t.Errorf("Where = %q", got)
	}
	if got := HolderName(dc, held); got != "the test cluster" {
		t.Errorf("HolderName = %q", got)
	}
	if got := HolderName(dc, false); got != "" {
		t.Errorf("HolderName not held = %q", got)
	}
	a, err := OpenActs(rd, "d")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = a.Decide(t.Context(), "r", engine.Decision{Kind: engine.DecideEdit}, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "an edit is not taken from this page while the test cluster carries out the run") {
		t.Errorf("edit through a holder: %v", err)
	}

	dc, held, err = OpenDecider(NoStore{}, "d")
	if err != nil || held {
		t.Fatalf("no store: %v, held %v", err, held)
	}
	if _, _, err := dc.Decide(t.Context(), "r", engine.Decision{}); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("decide with no store: %v", err)
	}
	if got := Where(dc, "d"); got != "in d" {
		t.Errorf("Where = %q", got)
	}
	if _, _, err := OpenPauser(NoStore{}, "d"); err == nil || err.Error() != "no way to pause a run in d" {
		t.Errorf("pause with no store: %v", err)
	}
}
