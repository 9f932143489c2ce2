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
//
// The rules every front end would otherwise repeat live here too. Who may
// decide on a run (MayDecide): its starter, the approvers recorded with it
// when it started (Oversight), and the local operator, who may decide any
// run; the Service refuses anyone else with ErrNotApprover and changes
// nothing. A front end only says who a person is (ServiceConfig.Members):
// the Slack bot says which user groups a person is in and whether they come
// from another organization; the terminal and the local API, which only the
// data directory's owner can reach, say the person is the operator, so
// anyone who can open <data>/gonogo.sock may decide, and a terminal run is
// decided by whoever runs it. A checkpoint's deadlines (Deadlines: a
// reminder, a decision timeout) are timers the Service keeps like retries,
// and the journal records what they did. Which step a run waits on
// (WaitingOn, NextDecision, Halted) and what a step is called (Title) are
// answered once, for every front end.
package engine
