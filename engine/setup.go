package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Setup is how a run's steps are carried out: the runner and its agent,
// the skills, the workflows a route step may continue with, and the
// policy. It is recorded when the run starts, so that continuing the run
// later (after a restart, from another shell) carries it out the same way
// whatever the environment says then. A run recorded before setups were
// kept has none (Run.Setup is nil).
type Setup struct {
	Runner     string   // claude, command or dry-run
	RunnerCmd  string   // the agent executable; "" is the runner's default
	RunnerArgs []string // arguments added after the runner's own
	Skills     []string // skills folders, in the order they are searched
	Workflows  string   // the named workflows' folder
	Policy     string   // the policy file; "" is the built-in policy
}

// SetupChange is one field of a run's setup changed on resume: which, and
// from what to what (text, lists joined by spaces).
type SetupChange struct {
	Field string // runner, runner-cmd, runner-args, skills, workflows, policy
	From  string
	To    string
}

// String says what the change did, in the words every front end and the
// audit trail use: "runner-cmd /old/agent -> /new/agent". A from that is
// empty was not recorded (a run from before setups were kept); a to that
// is empty is none.
func (c SetupChange) String() string {
	from, to := c.From, c.To
	if from == "" {
		from = "(not recorded)"
	}
	if to == "" {
		to = "(none)"
	}
	return fmt.Sprintf("%s %s -> %s", c.Field, from, to)
}

// Clone returns a copy that shares no slices with s.
func (s *Setup) Clone() *Setup {
	if s == nil {
		return nil
	}
	c := *s
	c.RunnerArgs = slices.Clone(s.RunnerArgs)
	c.Skills = slices.Clone(s.Skills)
	return &c
}

// DiffSetup lists the fields that differ between from and to, in a fixed
// order. A nil from (a run recorded before setups were kept) differs in
// every field to sets.
func DiffSetup(from, to *Setup) []SetupChange {
	var a, b Setup
	if from != nil {
		a = *from
	}
	if to != nil {
		b = *to
	}
	var out []SetupChange
	add := func(field, x, y string) {
		if x != y {
			out = append(out, SetupChange{Field: field, From: x, To: y})
		}
	}
	add("runner", a.Runner, b.Runner)
	add("runner-cmd", a.RunnerCmd, b.RunnerCmd)
	add("runner-args", strings.Join(a.RunnerArgs, " "), strings.Join(b.RunnerArgs, " "))
	add("skills", strings.Join(a.Skills, " "), strings.Join(b.Skills, " "))
	add("workflows", a.Workflows, b.Workflows)
	add("policy", a.Policy, b.Policy)
	return out
}

// ChangeSetup records that a run goes on with setup to, changed by actor
// (resume with --runner, --runner-cmd or --skills). It returns nothing when
// nothing changes, and refuses a finished run.
func ChangeSetup(r *Run, to Setup, actor string, now time.Time) ([]Event, error) {
	if r.Finished() {
		return nil, fmt.Errorf("run %s is already %s: %w", r.ID, r.State, ErrStale)
	}
	changes := DiffSetup(r.Setup, &to)
	if len(changes) == 0 {
		return nil, nil
	}
	return stamp(r, now, Event{Type: EvSetupChanged, Actor: actor, Setup: to.Clone(), Changes: changes}), nil
}
