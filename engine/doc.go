// Package engine owns gonogo's domain: plans, runs, steps, attempts,
// decisions and the journal of events; the typed states and their one
// transition table; the step-status rubric, pre-flight and the rules of one
// attempt; who may decide and the decision deadlines; and Service, the
// backend that runs steps on one machine, committing each change to a
// Store before it acts on it.
//
// engine imports only the standard library and does no I/O of its own
// (SkillDir's look at the working directory aside). It declares the
// interfaces it consumes (Store, Runner, Probe, Catalog, WorkflowSource,
// Notifier), which storage, internal/runner, parse, internal/intake and the
// front ends implement; engine/storetest holds every store to Store's
// contract. The clock and run ids reach the rules as arguments. The rules
// every backend keeps, and those every front end shares: docs/layout.md.
//
// A transition is pure: it validates a move against the run and returns
// the journal events that describe it, which Fold (or Apply, one event at
// a time) applies, so a run can always be rebuilt from its journal:
//
//	evs, err := engine.Pause(run, "ana", "lunch", now)
//	if err != nil {
//		return err // refused: nothing changed
//	}
//	run, err = engine.Fold(run, evs)
package engine
