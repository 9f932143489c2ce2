// Package engine owns gonogo's domain: plans and their steps, runs, attempts,
// decisions and the journal of events, the typed run and step states with
// their one transition table, the step-status rubric, run modes, the
// pre-flight refusals, and the run-loop service that carries out effects.
//
// The package does no I/O of its own. It declares the small interfaces it
// consumes (Store, Runner, Catalog, Notifier) and the adapters in storage,
// runner, bot and cmd implement them; Store's doc comments are the whole
// contract a store keeps, and engine/storetest checks a store against it. Transitions are pure: they validate a
// move against the current run and return the journal events that describe
// it; Apply folds an event into a run, so a run can always be rebuilt from its
// journal. The Service persists those events first and only then acts.
package engine
