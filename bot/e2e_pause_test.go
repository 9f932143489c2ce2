package bot_test

import (
	"slices"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

func hasButton(m fakeslack.Message, label string) bool {
	return slices.ContainsFunc(m.Buttons(), func(b fakeslack.Button) bool { return b.Text == label })
}

// Pause on the header of a moving run in auto: the running step finishes
// and waits at a checkpoint that offers its decisions and Resume auto; no
// step starts; Resume auto goes on in auto to the end. Only those who may
// decide may pause.
func TestPauseAndResumeAutoFromSlack(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	release := runner.holdSkill("deliver-prd")
	h := start(t, srv, t.TempDir(), runner)

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories --force-auto")
	header := waitMsg(t, srv, "the header with Pause", func(m fakeslack.Message) bool { return hasButton(m, "Pause") })

	click(t, srv, stranger, header, "Pause")
	waitEphemeral(t, srv, stranger, "Only <@"+starter+">", "pause it")
	if h.onlyRun().Paused {
		t.Fatal("someone who may not decide paused the run")
	}

	click(t, srv, starter, header, "Pause")
	waitMsg(t, srv, "the header of the paused run", func(m fakeslack.Message) bool {
		return m.TS == header.TS && containsAll(m.Rendered, "paused by <@"+starter+">") && hasButton(m, "Resume auto") && !hasButton(m, "Pause")
	})
	release()
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve", "Redo", "Abort", "Resume auto", "paused the run")
	if got := len(runner.jobs()); got != 1 {
		t.Fatalf("%d steps ran while the run was paused", got)
	}
	if r := h.onlyRun(); r.State != engine.RunWaiting || !r.Paused || r.Steps[1].Status != engine.StepPending {
		t.Fatalf("paused run: %s, paused %v, step 2 %s", r.State, r.Paused, r.Steps[1].Status)
	}

	click(t, srv, starter, step1, "Resume auto")
	end := waitText(t, srv, "Run complete")
	if row := endTable(t, end)[1]; row[2] != "advanced automatically" || row[3] != "-" {
		t.Errorf("the held step's row = %q, want it advanced automatically, by nobody", row)
	}
	r := h.onlyRun()
	var seen []engine.EventType
	j, err := h.db.Journal(ctxT(t), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range j {
		switch ev.Type {
		case engine.EvRunPaused, engine.EvRunResumed, engine.EvStepReleased:
			if ev.Actor != starter {
				t.Errorf("%s by %q, want %s", ev.Type, ev.Actor, starter)
			}
			seen = append(seen, ev.Type)
		}
	}
	if want := []engine.EventType{engine.EvRunPaused, engine.EvRunResumed, engine.EvStepReleased}; !slices.Equal(seen, want) {
		t.Fatalf("journal: %v, want %v", seen, want)
	}

	// A click on an old Pause once the run finished changes nothing.
	clickStale(t, srv, starter, header, "Pause")
	waitEphemeral(t, srv, starter, "Nothing to pause")
}
