// Package backendtest checks a backend, gonogo's engine as its front ends
// drive it, against one contract: the same calls (start, decide, pause and
// resume, abort, cancel) and the same reads (list, show, artifacts, the
// journal export writes) give the same answers on every backend, so a
// front end never asks which one it talks to. Run takes a test and an
// Opener.
//
// Two backends run it. engine.Service over the bbolt store, in
// t.TempDir() (storage/backend_contract_test.go), and the Temporal
// backend, with its workers, on an in-process Temporal server
// (internal/temporalbackend/backend_contract_temporal_test.go, under the
// temporal build tag). Each case gives the backend a runner and a catalog
// of its own (Parts), so every backend runs the same agents on the same
// skills, and expects fixed answers: the runs' journals event by event,
// their artifacts byte by byte, the refusals by their engine sentinel.
//
// The front ends' own interfaces (the terminal's, the local API's, the
// Slack bot's, the read commands') are slices of Backend.
package backendtest

import (
	"context"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// Backend is the engine as gonogo's front ends drive it. Every method
// answers with the engine's sentinel errors (engine.ErrNotFound,
// ErrStale, ErrDuplicate, ...), wrapped, and a refused call changes
// nothing.
type Backend interface {
	// Start records a new run of p and begins it (its ready steps start
	// on the backend's runner); the run as started.
	Start(ctx context.Context, p engine.Plan, opt engine.StartOptions) (*engine.Run, error)
	// Decide applies a decision on a step waiting for one; body is an
	// edit's replacement artifact. The run goes on from it at once.
	Decide(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (*engine.Run, error)
	// Pause holds a moving run at its next checkpoint; Unpause lets a
	// paused run go on, in mode m ("" its own).
	Pause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, error)
	Unpause(ctx context.Context, id engine.RunID, actor string, m engine.Mode) (*engine.Run, error)
	// Abort ends the run whatever its steps do: attempts under way are
	// stopped (their agents see their context end) and recorded.
	Abort(ctx context.Context, id engine.RunID, actor string) (*engine.Run, error)
	// Cancel stops one running attempt; it fails, and the run waits on
	// it.
	Cancel(ctx context.Context, id engine.RunID, step, attempt int, actor string) error
	Reader
}

// Reader is what gonogo runs, show and export read of the runs. It
// answers from what the backend stores, with or without anything carrying
// the runs out (Opened.Halt).
type Reader interface {
	// List is a summary of every run, newest first. A listing kept as an
	// index apart from the runs (Temporal's visibility store) may trail a
	// change by a moment; it comes to agree with Load.
	List(ctx context.Context) ([]engine.RunSummary, error)
	// Load is the run as its last change left it.
	Load(ctx context.Context, id engine.RunID) (*engine.Run, error)
	// Journal is the run's events in seq order, 1, 2, 3, ...: they fold
	// into the run Load returns.
	Journal(ctx context.Context, id engine.RunID) ([]engine.Event, error)
	// Artifact is an attempt's current artifact: the last edit, else the
	// agent's output; ErrNotFound for an attempt that stored none.
	Artifact(ctx context.Context, id engine.RunID, step, attempt int) ([]byte, error)
	// ArtifactVersions is every version of an attempt's artifact, the
	// agent's original first, then each edit (the audit trail's).
	ArtifactVersions(ctx context.Context, id engine.RunID, step, attempt int) ([][]byte, error)
}

// Parts are what a case makes the backend with: the runner its steps run
// on, the skills they run, and the notifier told of every change the
// backend commits (engine.ServiceConfig.Notifier; on a backend that
// cannot call into the test's process, what follows the runs it starts,
// as its front ends do).
type Parts struct {
	Runner   engine.Runner
	Catalog  engine.Catalog
	Notifier engine.Notifier
}

// Opened is a new, empty backend as a case sees it.
type Opened struct {
	Backend
	// Other is the backend as another gonogo process on the same runs
	// reaches it: a second client of a cluster, or, where the runs are
	// one process's (a bbolt store held by one gonogo), that process's
	// backend, which other processes reach through its local API.
	Other func() Backend
	// Halt stops whatever carries the runs out, as if it went away (the
	// gonogo holding a bbolt store, a cluster's workers), and returns the
	// runs as a gonogo process started afterwards reads them. The case
	// calls nothing on Backend afterwards.
	Halt func() Reader
}

// An Opener makes a backend of the case's parts, empty, for one case; it
// fails the test when it cannot, and lets the backend go when the test
// ends.
type Opener func(t *testing.T, parts Parts) Opened

// Run runs every case, each as a subtest on a backend of its own.
func Run(t *testing.T, open Opener) {
	cases := []struct {
		name string
		run  func(c *kase)
	}{
		{"StartDecideAndRead", startDecideAndRead},
		{"RedoAndEditKeepEveryVersion", redoAndEdit},
		{"PauseAndResumeFromAnotherProcess", pauseAndResume},
		{"DecideAndAbortFromAnotherProcess", decideAndAbortElsewhere},
		{"AbortStopsTheAgent", abortStopsTheAgent},
		{"CancelFailsTheAttempt", cancelFailsTheAttempt},
		{"RefusalsChangeNothing", refusals},
		{"ReadsWithoutACarrier", readsWithoutACarrier},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCase(t)
			c.o = open(t, Parts{Runner: c.runner, Catalog: catalog(), Notifier: c.notes})
			c.b = c.o.Backend
			tc.run(c)
		})
	}
}
