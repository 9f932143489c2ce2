// Package engine owns gonogo's domain: plans and their steps, runs,
// attempts, decisions and the journal of events, the typed run and step
// states with their one transition table, the step-status rubric, run
// modes, the pre-flight refusals, the rules of one attempt, the
// run-loop service that carries out effects, and Printable, the one way
// text from an agent is made safe to show to a person (terminal, export,
// Slack).
//
// The package does no I/O of its own. It declares the small interfaces it
// consumes (Store for runs, their journals, artifacts and notes; Runner
// for an agent; Probe for the files and commands a workflow condition
// looks at; Catalog and WorkflowSource for installed skills and workflows;
// Notifier for front ends) and the adapters in storage, runner, parse, bot
// and cmd implement them; Store's doc comments are the whole contract a
// store keeps, and engine/storetest checks a store against it. The clock
// and the source of run ids are given to the Service too (ServiceConfig.Now
// and NewID) and reach the rules as arguments; their defaults read the
// wall clock and random bits (NewRunID). The one other reach outside:
// SkillDir makes a relative skill folder absolute against the working
// directory.
//
// Transitions are pure: they validate a move against the current run and
// return the journal events that describe it; Apply folds an event into a
// run, so a run can always be rebuilt from its journal. The Service
// persists those events first and only then acts.
//
// # Backends
//
// Service is one backend: one process runs the steps on its own machine
// and keeps state in one Store. Front ends do not depend on it: each
// declares the methods it calls (bot.Engine; the terminal's in
// cmd/gonogo), so another backend, such as one that runs steps on a
// cluster, can stand in. Whatever it is built on, a backend keeps these
// rules, which front ends and the people deciding rely on:
//
//   - Persist, then act. A change is committed, with its journal events
//     numbered without gaps, before anything acts on it or shows it: before
//     an agent starts, a front end is notified, or a call returns.
//   - One transition table. Every change is computed by this package's
//     transitions (NewRun, Queue, Start, Finish, Decide and DecideExpand,
//     Pause, Unpause, StartAwaited, CancelAwaited, AbortRun, Interrupt,
//     SetMode, ChangeSetup) and folded by Apply; no backend changes a run
//     any other way.
//   - A decision is applied once. One for an attempt that is no longer the
//     step's latest, or for a step not waiting, is refused (ErrStale,
//     ErrNotWaiting). An idempotency key belongs to its run: one the run
//     recorded for the same decision is refused as applied already
//     (ErrDuplicate), one it recorded for another decision as reused
//     (ErrKeyReused); a refusal changes nothing.
//   - Steps running when whatever ran them died come back interrupted
//     (Recover when the whole process died, Interrupt naming the steps of
//     a lost worker), with a journal event, before anything reads the run,
//     and are offered for redo; a step is never recorded as finished
//     without an outcome.
//   - At most MaxParallel steps execute at once across all runs; the others
//     queue, and a free slot goes to the step queued longest, so a run that
//     keeps advancing cannot starve the others.
//   - An attempt is prepared and judged by the attempt rules (PlanAttempt,
//     ComposeJob, JudgeAttempt, PostconditionsDue, SettleAttempt): the same
//     reads give the same prompt, the same outcome the same verdict, files
//     and expansion.
//   - Automatic retries and rate-limit waits are due from the stored run
//     (RetryDue), so they survive a restart; a retry is a redo keyed with
//     RetryKey, so it counts once and loses to a person's decision.
//   - A person's decision, pause, resume, cancel or abort is checked with
//     MayDecide against the run's recorded Oversight before anything
//     changes; gonogo's own actors (retries, deadlines) are not refused.
//   - A run recorded to await Start (StartOptions.AwaitStart) runs nothing
//     until someone who may decide starts it (StartAwaited, keyed, so it
//     applies once; or Unpause); a Start or Cancel that finds it started
//     or ended is refused (ErrNotAwaitingStart).
//   - Decision deadlines are due from the stored run (DeadlineDue), like
//     retries, and the journal says which fired, so a restart neither
//     repeats nor forgets them.
//   - Clock readings and run ids are inputs: a rule is given now and the
//     id, and never draws either.
//   - Every committed change reaches the Notifier after it is durable, in
//     journal order for each run.
//   - Reading needs nothing but what the backend stores: a run, its
//     journal, its artifacts and the listing answer once whatever carried
//     the runs out (the gonogo holding a store, a cluster's workers) has
//     gone.
//
// engine/backendtest holds every backend to these rules as the front
// ends see them: one suite of calls and reads, the same answers expected
// of each.
//
// # Rules every front end shares
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
