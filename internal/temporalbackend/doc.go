// Package temporalbackend runs gonogo runs on Temporal, for teams that
// outgrow one machine: steps run on a pool of workers, and waiting runs and
// their decisions survive the loss of any machine. With no Temporal server
// configured, gonogo keeps using engine.Service on bbolt; this package is
// the other backend the engine's package doc describes, and keeps the same
// rules by calling the same engine functions.
//
// It owns:
//
//   - Workflow: one run is one workflow whose ID is the run id. The run
//     id, its start time and its first events come from the caller
//     (Backend.Start), never from inside the workflow. The workflow folds
//     the engine's events (engine.Fold) and records every transition's
//     events in history through workflow.SideEffect, so a replay under a
//     newer release folds the events people saw instead of deciding old
//     runs again with newer rules.
//   - Activities.Step, the step activity on StepQueue: it prepares,
//     runs and judges one attempt with the engine's attempt rules and puts
//     the artifact into an ArtifactStore; history carries only the
//     verdict. Activities.Expand reads the steps a route or decompose step
//     adds when a person approves or edits its output.
//   - The Updates (decide, abort, cancel, pause, unpause, set-mode,
//     change-setup) whose validators
//     apply the engine's rules (engine.Decide, engine.MayDecide, ...) to the
//     workflow's run, so a refusal is answered at once and writes nothing
//     (an act on a run whose workflow is over meets the same rules,
//     applied by Backend to the run it reads), and the Queries (run,
//     journal pages).
//   - Reading without a worker (read.go, history.go): a read asks the
//     run's query only while its workflow runs, and waits a moment for a
//     worker to answer; a closed workflow, or a running one no worker
//     answers for, is read from its history, where the workflow records
//     every event it folds and every artifact key it keeps.
//   - A run's notes (notes.go): what a front end keeps with a run (where
//     its Slack messages are), held by the run's workflow with bbolt's
//     semantics (Backend.Notes, a query; Backend.SetNotes, a merging
//     update), carried across continue-as-new, never in the journal.
//   - Thread syncs (slack.go): with Config.SlackQueue set, the workflow of
//     a run with a Slack channel schedules the SyncThread activity on that
//     queue after its start and after every change it records, one at a
//     time (changes while one runs bring one more), again later when a
//     sync asks, retried on another replica when one dies under it; the
//     serve replicas register it with RegisterSlack. Such a run's workflow
//     stays open after the run ends until a sync says its thread shows the
//     end, at most 24 hours, so the front end can still keep notes.
//   - Start keys (claim.go): a start with StartOptions.Key first claims
//     the key with a claim workflow (ClaimWorkflowName) of an id derived
//     from it, which names the run; a second start of the key is refused
//     with engine.ErrDuplicate, as engine.Service refuses it, or carries
//     out the claimed run when its claimer died before starting it.
//   - Backend, the client side front ends call, which maps Temporal's
//     answers back to the engine's sentinel errors.
//
// Payloads are versioned records (records.go) whose events, runs and
// memos are package record's, the bbolt store's own format
// (record.MarshalEvents), never engine structs.
//
// Automatic retries (RetryDue) and decision deadlines (DeadlineDue,
// Overdue) are workflow timers, read from the run as engine.Service reads
// them. Temporal's timers may fire up to about a second late, so two
// deadlines less than a second apart may be acted on together.
//
// A workflow cancelled through Temporal itself (an operator's temporal
// workflow cancel) aborts its run, as an abort by a person would.
//
// A step's live progress rides on its activity's heartbeats, which
// Backend.Progress reads back; a front end hears of changes by following a
// run's journal (Backend.Follow), since a workflow cannot call into its
// process.
//
// A long run continues as new (when Temporal suggests it, or past
// Config.HistoryLimit events) once no attempt, update or thread sync is
// under way: the new workflow of the same id starts from the run's whole
// journal, its artifact keys and its notes.
//
// Listing (listing.go): a run's search attributes (GonogoState,
// GonogoStarter, GonogoChannel) and a summary memo, set at start and kept
// current by the workflow, so List reads the visibility store only.
//
// The Slack front end's inbox (inbox.go): on Temporal, gonogo serve may
// run as several replicas of one Slack app that keep nothing on disk, so
// Inbox keeps each acknowledged envelope as a workflow of its own
// (EnvelopeWorkflow, id EnvelopeIDPrefix + the envelope's key). The
// replica that recorded it carries it out and signals it done; one not
// done within InboxConfig.RecoverAfter (its replica died and may never
// come back) is carried out by whichever replica polls SlackQueue
// (CarryOut, RegisterInbox), with retries. Nothing is replayed at start:
// Pending is empty. An envelope Socket Mode sends again, to this replica
// or another, is refused with engine.ErrDuplicate while the namespace
// retains its workflow. Its payload, what people typed, is in that
// workflow's history.
//
// Backend.Follow returns once the run's workflow has ended: for a run
// with a Slack thread, once its thread is done, not at the run's end.
//
// cmd/gonogo wires it in: gonogo worker registers the workflow and the
// step activities (and, as it starts, kills the agents a dead worker left
// on its machine), gonogo temporal setup prepares the namespace (Setup),
// and the terminal commands drive runs through Backend.
//
// Not built yet: queueing steps beyond the workers' capacity as
// engine.Queue (each worker's own limits apply instead), the artifact
// files under a data directory (attempts record where bbolt would write them; front ends
// on Temporal show none), and every version of an artifact edited more
// than once (Backend.ArtifactVersions).
package temporalbackend
