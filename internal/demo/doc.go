// Package demo is what gonogo demo runs instead of the user's plan and
// agent: the built-in example (a plan about a made-up product and three
// skills, each with a sample artifact; the command embeds it) unpacked to
// a temporary folder with its skills loaded (Unpack) and its plan taken in
// as a run's input (Take); and Runner, which "produces" each skill's
// sample artifact (references/EXAMPLE.md) after a short pause, so the
// progress line shows. It runs no agent and reaches no network.
//
// It may import engine, parse and internal/intake. A run the demo starts
// records Source as its plan's source and RunnerName as its runner, so
// that gonogo resume goes on with the same stand-in.
//
//	s, cleanup, err := demo.Take(exampleFS, "", 0, intake.Request{StartedBy: "ana"}) // example/plan.md, example/skills
//	defer cleanup()
//	svc := engine.NewService(engine.ServiceConfig{Catalog: s.Catalog, Runner: demo.Runner{Example: exampleFS, Delay: time.Second}})
//	run, err := svc.Start(ctx, s.Plan, s.Options)
package demo
