// Package intake is gonogo's one way in: it turns a request to start a run
// (a plan document's bytes, a chain expression, or a named workflow with
// its arguments and context; the flags given with it; who asked, from
// where, under which idempotency key) into the engine.Plan and the
// engine.StartOptions a run starts from, or into a refusal. The terminal
// (gonogo run, check, demo) and the Slack bot (/gonogo chain, /gonogo run,
// a mention with a plan file) both call Take, so an input is read, its
// flags merged and pre-flighted the same way wherever it arrives. It also
// owns the workflows directory (Dir): finding a workflow file by name,
// listing the workflows, and saving a chain as one.
//
// It imports engine (the rules, pre-flight) and parse (reading bytes), and
// nothing else of gonogo; engine imports only the standard library, so the
// intake is a package of its own. It reads through what it is given (the catalog,
// the policy, the workflows), so tests give it fakes.
//
//	plan, opts, err := intake.Take(intake.Config{
//		Catalog:   func() (engine.Catalog, error) { return cat, nil },
//		Policy:    engine.DefaultPolicy(),
//		Workflows: intake.Dir(workflowsDir),
//	}, intake.Request{Input: engine.InputChain, Chain: "deliver-prd -> deliver-user-stories", StartedBy: "ana"})
//	run, err := svc.Start(ctx, plan, opts)
package intake
