package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/intake"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/parse"
)

// input is what a run starts from, after pre-flight.
type input struct {
	kind    engine.InputKind
	plan    engine.Plan
	opts    engine.StartOptions
	catalog engine.Catalog
}

// loadInput reads the plan file, chain or workflow the flags name and
// hands it to the intake, with the installed skills and the policy, which
// runs pre-flight. A refusal comes back as *engine.Refusal (with whatever
// the plan revealed before it); anything else is an I/O or configuration
// error.
func loadInput(e env, f *runFlags, cfg config) (input, error) {
	in := input{}
	dryRunner(f)
	if err := oneOf(f); err != nil {
		return in, err
	}
	pol, err := parse.LoadPolicy(cfg.Policy)
	if err != nil {
		return in, fmt.Errorf("policy: %w", err)
	}
	req := intake.Request{Flags: f.Flags, StartedBy: actor(e)}
	switch {
	case f.workflow != "":
		in.kind = engine.InputWorkflow
		args, err := intake.Args(f.args)
		if err != nil {
			return in, err
		}
		req.Workflow, req.Args, req.Context = f.workflow, args, f.context
	case f.chainSet:
		in.kind = engine.InputChain
		req.Chain = f.chain
	default:
		in.kind = engine.InputPlan
		path := f.positional[0]
		src, err := terminal.ReadLimited(path, int64(f.maxPlanBytes), "plan file")
		if err != nil {
			load := func() (*parse.Catalog, error) { return cfg.LoadSkills(f.skills) }
			if hint := terminal.ChainInstead(path, pol, load); hint != "" {
				err = fmt.Errorf("%w; %s", err, hint)
			}
			return in, err
		}
		req.Plan, req.PlanName = src, path
		if int64(len(src)) > int64(f.maxPlanBytes) {
			// The refusal says how large the whole file is.
			if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
				req.PlanSize = fi.Size()
			}
		}
	}
	req.Input = in.kind
	in.plan, in.opts, err = intake.Take(intake.Config{
		Catalog: func() (engine.Catalog, error) {
			var err error
			in.catalog, err = cfg.LoadSkills(f.skills)
			return in.catalog, err
		},
		Policy: pol, Workflows: intake.Dir(cfg.WorkflowsDir), MaxPlanBytes: int64(f.maxPlanBytes),
		BudgetUSD: cfg.RunBudgetUSD,
	}, req)
	return in, err
}

// runInstead is the hint for a run id given to gonogo run where a plan
// file goes (the first line of a run, "gonogo run RUN", copied back): when
// the one argument names no file but a run in data, it points at resume
// and show; otherwise "". check opens no store, so only run asks.
func runInstead(ctx context.Context, e env, f *runFlags) string {
	if len(f.positional) != 1 || f.chainSet || f.workflow != "" {
		return ""
	}
	arg, data := f.positional[0], f.data
	if strings.ContainsRune(arg, filepath.Separator) {
		return ""
	}
	if _, err := os.Lstat(arg); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	db, err := openReader(ctx, e, data)
	if err != nil {
		return ""
	}
	defer db.Close()
	if _, err := db.Load(ctx, engine.RunID(arg)); err != nil {
		return ""
	}
	return fmt.Sprintf("%s is a run in %s: did you mean gonogo resume %s%s (or gonogo show %s%s)?", arg, data, arg, terminal.DataFlag(data), arg, terminal.DataFlag(data))
}
