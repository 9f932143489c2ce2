// Package datadir owns a data directory as gonogo's commands open it:
// who may use it (Check: this user alone may write it, and its agents/
// folder), the agents recorded in agents/ that a gonogo which died left
// running (ReapAgents), and its store, opened to write (Open: when another
// gonogo holds it, a *HeldError naming that gonogo) or to read (OpenReader:
// the store when it is free, read-only when this user may only read it,
// else through the local API of the gonogo holding it; no store yet is no
// runs, and nothing is created). Where a decision, a pause or a resume on
// the runs read goes (OpenDecider, OpenPauser, OpenActs for the web page):
// the holder or cluster that reads them, else the store itself; and what
// gonogo decide and pause do there and print (Decide, Pause, ResumeHeld).
//
// It may import engine, storage, internal/runner (the agent records),
// internal/localapi (the holder's API) and internal/terminal (the rule
// that an approval adding steps needs a holder); what is in the store, the
// socket's protocol and the agents' processes are theirs. A cluster's
// runs (GONOGO_TEMPORAL_ADDR) are read by the command, not here: a reader
// that decides itself is taken as it is.
//
//	db, err := datadir.Open(ctx, "gonogo-data")
//	if h, ok := errors.AsType[*datadir.HeldError](err); ok {
//		// h.Holder, e.g. "gonogo run (pid 4242)", carries out its runs
//	}
package datadir
