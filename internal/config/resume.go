package config

import (
	"errors"
	"fmt"
	"io"

	"github.com/gonogo/gonogo/engine"
)

// ResumeSetup works out how resumed run r is carried out: as recorded when
// it started, except where o says otherwise (see Resume); a run recorded
// before setups were kept goes on as this shell says, as it always did,
// with a note on w. It refuses (a usage error: exit 2) when what the run
// needs is gone, naming the flag that points at a replacement, and makes
// c what it decided for a run that recorded its setup.
func (c *Config) ResumeSetup(w io.Writer, r *engine.Run, o Overrides) (engine.Setup, error) {
	if r.Setup == nil {
		s := *c.Setup(o.Runner, o.RunnerCmd, o.Skills)
		fmt.Fprintf(w, "note: run %s was recorded before gonogo kept how a run is carried out; it goes on with this shell's runner (%s), agent and skills, recorded with it from now on\n", r.ID, s.Runner)
		return s, nil
	}
	s, err := c.Resume(r, o)
	if err != nil {
		return s, err
	}
	if !r.DryRun {
		if err := CheckSetup(r.ID, s); err != nil {
			return s, err
		}
	}
	if WorkflowsGone(r, s) {
		fmt.Fprintf(w, "warning: the workflows folder %s recorded with run %s is gone; a route step cannot continue with a named workflow\n", s.Workflows, r.ID)
	}
	c.Apply(s)
	return s, nil
}

// SettleSetup is the setup an unfinished stored run (peek; nil when there
// is none) goes on with (see ResumeSetup; nil for none), and refuses the
// dry-run runner for a run started for real.
func (c *Config) SettleSetup(w io.Writer, peek *engine.Run, o Overrides) (*engine.Setup, error) {
	var setup *engine.Setup
	runner := o.Runner
	if peek != nil && !peek.Finished() {
		s, err := c.ResumeSetup(w, peek, o)
		if err != nil {
			return nil, err
		}
		setup = &s
		if peek.Setup != nil {
			runner = s.Runner
		}
	}
	if peek != nil && !peek.DryRun && runner == "dry-run" {
		return nil, errors.New("this run was started for real: the dry-run runner would record its steps as not executed; resume it with --runner claude or --runner command")
	}
	return setup, nil
}

// KeepKind keeps a resumed run (peek; nil when there is none) the kind it
// started as: a real run is never continued dry (dry, asked for, is
// refused), and a dry run never reaches an agent. It is whether the run
// goes on dry.
func KeepKind(peek *engine.Run, dry bool) (bool, error) {
	if peek == nil || dry == peek.DryRun {
		return dry, nil
	}
	if dry {
		return dry, NotDry(peek.ID)
	}
	return peek.DryRun, nil
}

// CheckpointedUnpaused refuses resume --checkpointed (checkpointed) of a
// run no person paused, which the flag would not change.
func CheckpointedUnpaused(checkpointed bool, r *engine.Run) error {
	if !checkpointed || r == nil || r.PausedByPerson() {
		return nil
	}
	return fmt.Errorf("--checkpointed: run %s is not paused, and --checkpointed is for a paused run", r.ID)
}

// NotDry refuses resume --dry-run of a run started for real, rather than
// accept the flag and ignore it.
func NotDry(id engine.RunID) error {
	return fmt.Errorf("--dry-run: run %s was started for real, and a real run is never continued dry; resume it without --dry-run", id)
}
