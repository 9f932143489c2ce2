package web

import (
	"context"
	"errors"
	"testing"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
)

// countingRuns counts the changes that reach the engine; every other
// method of bot.Runs is left unimplemented (a call panics).
type countingRuns struct {
	bot.Runs
	decided, paused, unpaused int
}

func (c *countingRuns) Decide(context.Context, engine.RunID, engine.Decision, []byte) (*engine.Run, error) {
	c.decided++
	return &engine.Run{}, nil
}

func (c *countingRuns) Pause(context.Context, engine.RunID, string) (*engine.Run, error) {
	c.paused++
	return &engine.Run{}, nil
}

func (c *countingRuns) Unpause(context.Context, engine.RunID, string, engine.Mode) (*engine.Run, error) {
	c.unpaused++
	return &engine.Run{}, nil
}

// TestSlackActsDecideOnlyAsAPerson: a session no Slack person started
// changes nothing; one a person started reaches the engine, carried.
func TestSlackActsDecideOnlyAsAPerson(t *testing.T) {
	runs := &countingRuns{}
	a := SlackActs{Runs: runs}
	ctx := context.Background()
	if _, _, err := a.Decide(ctx, "r1", engine.Decision{}, nil); !errors.Is(err, errNoPerson) {
		t.Fatalf("Decide without a person: %v", err)
	}
	if _, _, err := a.Pause(ctx, "r1", "x"); !errors.Is(err, errNoPerson) {
		t.Fatalf("Pause without a person: %v", err)
	}
	if _, _, err := a.Unpause(ctx, "r1", "x"); !errors.Is(err, errNoPerson) {
		t.Fatalf("Unpause without a person: %v", err)
	}
	if runs.decided+runs.paused+runs.unpaused != 0 {
		t.Fatalf("a change without a person reached the engine: %+v", runs)
	}
	ctx = context.WithValue(ctx, personKey{}, Person{User: "U1", Team: "T1"})
	for _, act := range []func() (bool, error){
		func() (bool, error) { _, c, err := a.Decide(ctx, "r1", engine.Decision{}, nil); return c, err },
		func() (bool, error) { _, c, err := a.Pause(ctx, "r1", "U1"); return c, err },
		func() (bool, error) { _, c, err := a.Unpause(ctx, "r1", "U1"); return c, err },
	} {
		if carried, err := act(); err != nil || !carried {
			t.Fatalf("as a person: carried %v, %v", carried, err)
		}
	}
	if runs.decided != 1 || runs.paused != 1 || runs.unpaused != 1 {
		t.Fatalf("changes as a person: %+v", runs)
	}
}
