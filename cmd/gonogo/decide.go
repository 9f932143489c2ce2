package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/internal/terminal"
)

// Exit codes of decide: 0 decided (or already decided with the same
// key), 1 refused (nothing waiting, not possible now, stale, the key used
// for another decision), 2 usage or I/O.

// decideRequest is one gonogo decide.
type decideRequest struct {
	data     string
	run      engine.RunID
	kind     engine.DecisionKind
	feedback string
	step     int    // 0: the step waiting for a decision
	attempt  int    // 0: the step's latest attempt
	key      string // "": a fresh one
	actor    string
}

// parseDecideArgs reads RUN KIND [feedback...] (the flags are read
// already).
func parseDecideArgs(req *decideRequest, positional []string) error {
	if len(positional) < 2 {
		return usagef("expected a run id and a decision: gonogo decide RUN approve|skip|redo [feedback]|abort [--step N]")
	}
	req.run = engine.RunID(positional[0])
	kind, err := engine.ParseDecisionKind(strings.ToLower(positional[1]))
	if err != nil || kind == engine.DecideEdit {
		return usagef("%q is not a decision decide makes; expected approve, skip, redo [feedback] or abort (edit in the terminal or Slack running the step)", positional[1])
	}
	req.kind = kind
	rest := positional[2:]
	if len(rest) > 0 && kind != engine.DecideRedo {
		return usagef("%s takes no more words (got %q); only redo takes feedback", kind, strings.Join(rest, " "))
	}
	req.feedback = strings.TrimSpace(strings.Join(rest, " "))
	return nil
}

// decider is where a decision goes: the gonogo holding the data directory,
// or the store itself when nobody holds it.
type decider interface {
	runReader
	// Decide applies d; carried reports whether the run goes on from it
	// now (else with gonogo resume).
	Decide(ctx context.Context, id engine.RunID, d engine.Decision) (r *engine.Run, carried bool, err error)
}

// storeDecider records decisions in a store no gonogo holds: the run goes
// on from them when it is next resumed.
type storeDecider struct {
	storeReader
	svc localapi.Recorder
}

func (s storeDecider) Decide(ctx context.Context, id engine.RunID, d engine.Decision) (*engine.Run, bool, error) {
	r, err := s.svc.Record(ctx, id, d, nil)
	return r, false, err
}

func openDecider(ctx context.Context, e env, data string) (decider, bool, error) {
	rd, err := openReader(ctx, e, data)
	if err != nil {
		return nil, false, err
	}
	switch rd := rd.(type) {
	case *clusterReader:
		return rd, true, nil
	case *localapi.Client:
		return rd, true, nil
	case noStore:
		return rd, false, nil
	case storeReader:
		if rd.ReadOnly() {
			_ = rd.Close()
			return nil, false, fmt.Errorf("cannot record anything in %s: you may read this store but not write it (another user's store, or a read-only mount); act as a user who can write it", data)
		}
		svc := engine.NewService(engine.ServiceConfig{Store: rd.DB, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Members: engine.LocalOperator})
		return storeDecider{storeReader: rd, svc: svc}, false, nil
	}
	_ = rd.Close()
	return nil, false, fmt.Errorf("no way to record a decision in %s", data)
}

// runDecide carries out one gonogo decide and returns its exit code.
func runDecide(ctx context.Context, e env, req decideRequest) int {
	e = printableOut(e) // step titles and feedback are shown, never obeyed
	dc, held, err := openDecider(ctx, e, req.data)
	if err != nil {
		return fail(e, "decide", err)
	}
	defer dc.Close()
	r, err := dc.Load(ctx, req.run)
	if errors.Is(err, engine.ErrNotFound) {
		return fail(e, "decide", fmt.Errorf("no run %s %s (see gonogo runs)", req.run, where(dc, req.data)))
	}
	if err != nil {
		return fail(e, "decide", err)
	}
	if req.key == "" {
		req.key = "local:" + terminal.RandomKey()
	} else if code, answered := answerKey(e, r, req); answered {
		return code
	}
	s, err := decisionStep(r, req)
	if err != nil {
		return refuseOrFail(e, err)
	}
	if err := needsHolder(r, s, req.kind, held, req.data); err != nil {
		return fail(e, "decide", err)
	}
	d := engine.Decision{Kind: req.kind, Step: s.N, Attempt: req.attempt, Feedback: req.feedback, Key: req.key, Actor: req.actor}
	if d.Attempt == 0 {
		d.Attempt = terminal.AttemptN(s.Latest())
	}
	after, carried, err := dc.Decide(ctx, r.ID, d)
	if errors.Is(err, engine.ErrDuplicate) || errors.Is(err, engine.ErrKeyReused) {
		// Another decide with the key got there first: the run as it
		// now stands says whether it was this decision.
		if now, lerr := dc.Load(ctx, r.ID); lerr == nil {
			if code, answered := answerKey(e, now, req); answered {
				return code
			}
		}
	}
	if err != nil {
		return refuseOrFail(e, err)
	}
	v := terminal.Recorded{Run: after, Data: req.data, Holder: holderName(dc, held), Carried: carried}
	v.Decided(e.stdout, d)
	return terminal.ExitOK
}

// needsHolder refuses to approve, in a store no gonogo holds, a step whose
// output adds steps: that needs the skills and workflows a gonogo resume
// loads.
func needsHolder(r *engine.Run, s *engine.Step, kind engine.DecisionKind, held bool, data string) error {
	if !held && kind == engine.DecideApprove && (s.Rules.Route || s.Rules.Decompose != "") {
		return fmt.Errorf("approving step %d adds steps to the run from its output, which needs its skills and workflows: approve it in gonogo resume %s%s", s.N, r.ID, terminal.DataFlag(data))
	}
	return nil
}

// holderName names the gonogo that holds the data directory, for a reader
// opened held ("" when not held).
func holderName(rd runReader, held bool) string {
	if c, ok := rd.(describer); ok && held {
		return c.Describe()
	}
	return ""
}

// answerKey answers a decision whose --key run r has recorded a decision
// under: already decided (exit 0) when it is the decision asked for,
// refused (exit 1), naming the recorded one, when the key was used for
// another. answered is false when r recorded nothing under the key.
func answerKey(e env, r *engine.Run, req decideRequest) (code int, answered bool) {
	asked := engine.Decision{Kind: req.kind, Step: req.step, Attempt: req.attempt, Feedback: req.feedback, Key: req.key, Actor: req.actor}
	rec, err := engine.KeyedBefore(r, asked)
	switch {
	case err != nil:
		return refuseOrFail(e, err), true
	case rec == nil:
		return 0, false
	}
	fmt.Fprintf(e.stdout, "Already decided with key %s on run %s: %s; nothing applied twice.\n", req.key, r.ID, engine.DescribeDecision(*rec))
	return terminal.ExitOK, true
}

// errRefused marks what decide refuses under the run's rules (exit 1).
var errRefused = errors.New("refused")

// decisionStep finds the step the decision is for: the one named, else
// the one step that waits on people. Whether that step can take the
// decision now is the engine's to say when it applies it.
func decisionStep(r *engine.Run, req decideRequest) (*engine.Step, error) {
	if req.step != 0 {
		s := r.Step(req.step)
		if s == nil {
			return nil, usagef("run %s has no step %d (it has %d)", r.ID, req.step, len(r.Steps))
		}
		return s, nil
	}
	var s *engine.Step
	var waiting []string
	for _, st := range engine.WaitingOn(r) {
		waiting = append(waiting, fmt.Sprint(st.N))
		if s == nil {
			s = st
		}
	}
	switch {
	case s == nil:
		return nil, fmt.Errorf("run %s is %s: no step waits for a decision: %w", r.ID, r.State, errRefused)
	case len(waiting) > 1:
		return nil, usagef("steps %s of run %s wait for a decision: name one with --step N", strings.Join(waiting, ", "), r.ID)
	}
	return s, nil
}

// refuseOrFail prints err and returns 1 for a refusal under the run's
// rules, 2 for anything else.
func refuseOrFail(e env, err error) int {
	for _, r := range []error{errRefused, engine.ErrStale, engine.ErrNotWaiting, engine.ErrForbidden, engine.ErrDuplicate, engine.ErrKeyReused} {
		if errors.Is(err, r) {
			fmt.Fprintf(e.stderr, "gonogo decide: REFUSED: %s\n", strings.TrimSuffix(err.Error(), ": "+errRefused.Error()))
			return terminal.ExitRefused
		}
	}
	return fail(e, "decide", err)
}

func newDecideCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	var req decideRequest
	c := &cobra.Command{
		Use:   "decide [flags] RUN approve|skip|redo [feedback...]|abort",
		Short: "Decide on a run's waiting step, also while another gonogo holds the run",
		Long: `Decide on the step of RUN that waits for a decision, as a click in Slack or an answer in
the terminal would: approve, skip, redo (the rest of the line is the agent's feedback;
put it after -- if it starts with a dash) or abort. The run's rules apply: only the
decisions its step allows, and a decision for an attempt that is no longer the latest is
refused. When a gonogo (run, resume or serve) holds the data directory, it carries the
decision out and goes on with the run; when none does, the decision is recorded and the
run goes on with gonogo resume RUN. The decision is recorded as yours (GONOGO_ACTOR,
USER or LOGNAME).

A --key belongs to its run: the same key on another run is a new decision there. On
the same run, the decision retried with its key is answered "Already decided"; the key
given with another decision is refused, naming the decision recorded under it.

Exit codes: 0 decided (or already decided with the same --key), 1 refused (nothing
waits, the decision is not possible now, the attempt moved on, or the --key was used
on this run for another decision), 2 usage or I/O error.`,
		RunE: a.action(f, func(ctx context.Context, e env, cfg config, f *runFlags) int {
			r := req
			r.data, r.actor = f.data, actor(e)
			if err := parseDecideArgs(&r, f.positional); err != nil {
				return fail(e, "decide", err)
			}
			return runDecide(ctx, e, r)
		}),
		ValidArgsFunction: a.completeDecide(f),
	}
	a.addDataFlag(c, f)
	fs := c.Flags()
	fs.Var(numberFlag{&req.step, "step"}, "step", "decide step `N` (default: the step waiting; needed when several wait)")
	fs.Var(numberFlag{&req.attempt, "attempt"}, "attempt", "the attempt `K` decided on; refused as stale once the step has moved past it")
	fs.StringVar(&req.key, "key", "", "idempotency `KEY` on this run: a decision retried with the same key is applied once")
	for _, n := range []string{"step", "attempt", "key"} {
		a.completeFlag(c, n, cobra.NoFileCompletions)
	}
	return c
}

// completeDecide completes a run id, then the decision.
func (a *cli) completeDecide(f *runFlags) cobra.CompletionFunc {
	runs := a.completeRunIDs(f)
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return runs(c, args, toComplete)
		}
		if len(args) == 1 {
			return []cobra.Completion{"approve", "skip", "redo", "abort"}, cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}
