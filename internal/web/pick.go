package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gonogo/gonogo/engine"
)

// A best-of step's latest round of candidates shows side by side, each
// with its runner, result, artifact and a form to pick it while the step
// waits for a pick. Below them are the diffs of each candidate against the
// first one with an artifact (candidate 1 unless it has none): with two
// candidates that is the diff between them, with more each one against the
// same base, so no pair needs choosing. Whether a pick may be made is the
// engine's to say (engine.PickDecision, then the Decider).

// roundView is the candidates of a step's latest best-of round.
type roundView struct {
	Run        engine.RunID
	Step       int
	Candidates []candidateView
	// Picking says the step waits for people to pick one.
	Picking bool
	Diffs   []candidateDiff
}

// candidateView is one candidate: its attempt as the page shows any, the
// pick that took it, and its pick form while it may be picked.
type candidateView struct {
	attemptView
	PickedBy *engine.Decision
	Pick     *formKeys
}

// candidateDiff is the diff from candidate A to candidate B (numbers in
// the round; AttemptA and AttemptB their attempts), or why it is not
// shown.
type candidateDiff struct {
	A, B               int
	AttemptA, AttemptB int
	Lines              []Line
	Refused            string
}

// roundOf takes the attempts of st's latest round out of attempts (each
// attempt's view, in the step's order) into a round of their own; the
// round is nil when st's latest attempt is no candidate.
func roundOf(id engine.RunID, st *engine.Step, attempts []attemptView) (*roundView, []attemptView) {
	cands := engine.Candidates(st)
	if cands == nil {
		return nil, attempts
	}
	in := map[int]bool{}
	for _, a := range cands {
		in[a.N] = true
	}
	rv := &roundView{Run: id, Step: st.N, Picking: engine.Picking(st)}
	var rest []attemptView
	for _, av := range attempts {
		if !in[av.N] {
			rest = append(rest, av)
			continue
		}
		rv.Candidates = append(rv.Candidates, candidateView{attemptView: av, PickedBy: pickOf(st, av.N)})
	}
	rv.Diffs = candidateDiffs(rv.Candidates)
	return rv, rest
}

// pickOf is the last pick of attempt n of st, nil when none took it.
func pickOf(st *engine.Step, n int) *engine.Decision {
	for i := len(st.Decisions) - 1; i >= 0; i-- {
		if d := st.Decisions[i]; d.Kind == engine.DecidePick && d.Attempt == n {
			return &d
		}
	}
	return nil
}

// candidateDiffs diffs each candidate with an artifact against the first
// one with an artifact.
func candidateDiffs(cs []candidateView) []candidateDiff {
	var out []candidateDiff
	var base *candidateView
	for i := range cs {
		c := &cs[i]
		if c.Rendered == "" {
			continue
		}
		if base == nil {
			base = c
			continue
		}
		d := candidateDiff{A: base.Candidate, B: c.Candidate, AttemptA: base.N, AttemptB: c.N}
		lines, err := Diff([]byte(base.Raw), []byte(c.Raw))
		if tl, ok := errors.AsType[*TooLargeError](err); ok {
			d.Refused = tl.Error()
		}
		d.Lines = lines
		out = append(out, d)
	}
	return out
}

// offerPicks gives each candidate that may be picked its pick form, while
// st waits for a pick.
func offerPicks(rv *roundView, st *engine.Step, csrf string, key func() (string, error)) error {
	if rv == nil || !engine.Picking(st) {
		return nil
	}
	for i := range rv.Candidates {
		c := &rv.Candidates[i]
		if !engine.Pickable(&c.Attempt) {
			continue
		}
		k, err := key()
		if err != nil {
			return err
		}
		c.Pick = &formKeys{CSRF: csrf, Key: k}
	}
	return nil
}

// pick takes the candidate f names as its step's artifact. The engine
// makes the decision (engine.PickDecision) from the run as it stands, and
// refuses it in its own words; the page's attempt stays in it, so a round
// redone since the page was made is refused as stale, not picked anew.
func (s *Server) pick(w http.ResponseWriter, r *http.Request, f form) {
	asked := f.decision(s.actorOf(r))
	line, err := s.withDecider(r.Context(), func(ctx context.Context, dc Decider) (string, error) {
		run, err := s.load(ctx, f.Run)
		if err != nil {
			return "", err
		}
		d, err := engine.PickDecision(run, f.Step, f.Candidate, asked.Actor, asked.Feedback)
		if err != nil {
			return s.refused(ctx, f.Run, asked, err), nil
		}
		d.Attempt, d.Key = f.Attempt, f.Key
		_, carried, err := dc.Decide(ctx, f.Run, d, nil)
		if err != nil {
			return s.refused(ctx, f.Run, d, err), nil
		}
		return decided(d, f.Run) + goesOn(f.Run, carried), nil
	})
	s.answer(w, r, f.Run, line, err)
}

// load reads run id as it stands.
func (s *Server) load(ctx context.Context, id engine.RunID) (*engine.Run, error) {
	src, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := src.Close(); cerr != nil {
			s.log.Warn("close the runs", "err", cerr)
		}
	}()
	run, err := src.Load(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	return run, nil
}
