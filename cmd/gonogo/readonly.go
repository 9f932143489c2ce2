package main

import (
	"fmt"
	"io"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// notRunning is the steps of r that a store read read-only records as
// running though no gonogo runs them: none holds the store (a writer
// would hold it, and the reader would have asked it instead), so the
// gonogo that ran them has stopped. A gonogo that may write the store
// records them interrupted as it opens it; a reader writes nothing, and
// shows them as recorded, saying so.
func notRunning(db runReader, r *engine.Run) []*engine.Step {
	if !readOnly(db) {
		return nil
	}
	var out []*engine.Step
	for _, ev := range engine.Interrupt(r, time.Now()) {
		if s := r.Step(ev.Step); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// printNotRunning says, under a run's state, which of its steps are
// recorded running in a read-only store though nothing runs them.
func printNotRunning(w io.Writer, steps []*engine.Step) {
	for _, s := range steps {
		fmt.Fprintf(w, "Not running: step %d (%s) is recorded running, but no gonogo holds this store: the one running it has stopped.\n", s.N, s.Skill)
		fmt.Fprintf(w, "             This store is read-only for you, so it is shown as recorded; it reads interrupted once a gonogo that can write the store opens it.\n")
	}
}

// readOnly reports whether db is a store this user may only read.
func readOnly(db runReader) bool {
	sr, ok := db.(storeReader)
	return ok && sr.ReadOnly()
}
