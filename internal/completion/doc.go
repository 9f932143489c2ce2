// Package completion answers shell completion for gonogo's command line.
// Cobra's generators (gonogo completion bash|zsh|fish) print scripts that
// call back into gonogo (gonogo __complete ...), and the functions here
// answer: the skill names of a chain typed so far (Chain), each marked
// when it cannot run as a step and why; the run ids in a data directory
// (RunIDs), with their state and source; directories (Dirs), runners
// (Runners) and names by prefix (WithPrefix). OpenQuotes adds to the bash
// script what completes a word typed inside an open quote (a chain).
//
// A completion never fails and never waits long: whatever cannot be read
// (a missing directory, a store another gonogo holds and does not answer
// at once for) completes nothing, and nothing is created.
//
// It may import cobra, engine, parse, storage, internal/runner,
// internal/datadir and internal/localapi (to read runs) and
// internal/terminal (its words); the commands and which of their
// arguments and flags complete how are cmd/gonogo's.
//
//	var flags completion.Flags
//	flags.Add(cmd, "skills", completion.Dirs) // noted as commands are built
//	if args[0] == cobra.ShellCompRequestCmd {
//		flags.Register() // only when the shell asks
//	}
package completion
