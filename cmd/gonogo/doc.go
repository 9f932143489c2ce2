// Command gonogo runs AI-agent skills step by step, stopping at each
// checkpoint for the team's go / no-go: in Slack (gonogo serve) or in a
// terminal (gonogo run). See the README for the whole tour.
//
// This package owns the command line: its commands and flags (cobra;
// flags.go, with the conventions every command keeps in internal/cmdline),
// the environment it reads (internal/config reads and checks it;
// config.go), the signals (main, through terminal.WithInterrupts, in one
// place) and the wiring that opens a store (internal/datadir) or dials
// Temporal and hands the adapters to a backend and a front end (wire.go,
// serve.go, worker.go, temporal_run.go). The rules live in engine, the
// terminal front end and what the read commands print in internal/terminal.
//
// It may import every package of the module, and none imports it. One
// exit: main calls realMain, which returns the exit code (0 completed, 1
// refused, halted or aborted, 2 usage, I/O or configuration, 3 left
// waiting), so tests run gonogo in-process with an environment of their
// own:
//
//	m := map[string]string{"GONOGO_DATA_DIR": t.TempDir(), "GONOGO_SKILLS_DIR": "example/skills"}
//	code := realMain(ctx, env{args: []string{"check", "--chain", "deliver-prd"},
//		stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
//		lookup: envconfig.MapLookuper(m), getenv: func(k string) string { return m[k] }})
//	// code 0: the chain is accepted; out holds what check prints
package main
