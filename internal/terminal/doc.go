// Package terminal is gonogo's terminal front end: it follows a run as it
// goes (gonogo run, resume, demo, and a run on a Temporal cluster), prints
// each step's start, progress, result and preview, and asks a person or a
// script for the decision at each checkpoint, line by line on standard
// input (a key at a time for the abort confirmation). It also holds what
// the read commands print, for people and as JSON: runs (Runs), show
// (Show, ArtifactShow), check (Check), skills (SkillList, PrintSkills) and
// workflow list (PrintWorkflows); the audit trail export writes (Export,
// whole or not at all: WriteFileAtomic); what gonogo decide asks
// (DecideRequest: its words, the step it is for); what decide, pause and
// resume say they recorded (Recorded, RecordSetup, ResumeMode); and the sanitiser every line for people goes
// through (Printable), so that nothing an agent wrote reaches a terminal
// as a control sequence. The
// JSON shapes (RunJSON, RunLineJSON, CheckJSON, SkillJSON) are gonogo's
// contract: testdata holds them as goldens.
//
// It may import engine (and engine/audit: the trail export writes, the
// journal show --json gives; parse: a chain given without --chain, for
// its hint; internal/atomicfile: the files export writes): what it asks of a run goes through
// Backend (the engine's service, or the Temporal backend), what a view
// reads through a small interface (RunLoader, ArtifactReader,
// ExportReader, SkillCatalog), and every rule it needs (which step waits,
// what a decision may be, how a run stands) is the engine's. Exit codes of run, resume and check are its ExitOK,
// ExitRefused, ExitUsage and ExitWaiting.
//
//	box := terminal.NewInbox() // the service's notifier
//	d := terminal.New(terminal.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv},
//		svc, box, terminal.Options{Data: "gonogo-data", Actor: "ana"})
//	code := d.Drive(ctx, run)
package terminal
