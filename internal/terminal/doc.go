// Package terminal is gonogo's terminal front end: it follows a run as it
// goes (gonogo run, resume, demo, and a run on a Temporal cluster), prints
// each step's start, progress, result and preview, and asks a person or a
// script for the decision at each checkpoint, line by line on standard
// input (a key at a time for the abort confirmation). It also holds the
// words the read commands (show, runs, check) print for people, and the
// sanitiser every such line goes through (Printable), so that nothing an
// agent wrote reaches a terminal as a control sequence.
//
// It may import engine only: what it asks of a run goes through Backend
// (the engine's service, or the Temporal backend), and every rule it needs
// (which step waits, what a decision may be, how a run stands) is the
// engine's. Exit codes of run, resume and check are its ExitOK,
// ExitRefused, ExitUsage and ExitWaiting.
//
//	box := terminal.NewInbox() // the service's notifier
//	d := terminal.New(terminal.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv},
//		svc, box, terminal.Options{Data: "gonogo-data", Actor: "ana"})
//	code := d.Drive(ctx, run)
package terminal
