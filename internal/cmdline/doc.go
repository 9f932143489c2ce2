// Package cmdline holds the conventions gonogo's command line keeps on top
// of cobra whatever the command: a flag mistake is a usage error that says
// how to fix it (FlagError: a long flag given one dash, a flag that another
// command takes), help on an unknown topic is a mistake rather than the
// overview (HelpCmd), version prints one line (VersionCmd), and a flag
// that counts from 1 refuses 0 or a word as it is read (NumberFlag). Every error
// it returns is a usage error: the command prints it and exits 2.
//
// It may import cobra and nothing of gonogo's; which commands and flags
// there are is cmd/gonogo's.
//
//	root.SetFlagErrorFunc(cmdline.FlagError)
//	root.SetHelpCommand(cmdline.HelpCmd())
//	root.AddCommand(cmdline.VersionCmd("v1.2.0"))
//	// gonogo runs -json: "unknown flag -json: long flags take two dashes (--json)"
package cmdline
