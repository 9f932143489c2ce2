// Package runner owns gonogo's agent runners: the adapters that carry out
// one step attempt (an engine.Job) by running an agent and bring back an
// engine.Outcome. claude, codex and gemini run those CLIs and read their
// JSON event streams for live progress, the artifact and its usage;
// command runs any executable, whose stdout is the artifact; dry-run runs
// nothing. Probe answers a workflow step's file and command conditions
// (engine.Probe).
//
// It imports engine and the standard library only. Every runner that
// starts a process gives it the prompt on stdin and the environment env.go
// decides, runs it in a process group of its own and kills the whole group
// (and what the agent detached from it, orphans.go) before Run returns; an
// agent's own errors come back in its words, secrets blanked. The process
// handling is Linux's (process groups, waitid, /proc, the child
// subreaper). What each runner reports, what an agent gets and how it is
// stopped: docs/agents.md.
//
//	r, err := runner.New("command", runner.Config{Cmd: "./my-agent", Timeout: 10 * time.Minute})
//	if err != nil {
//		return err
//	}
//	out := r.Run(ctx, engine.Job{Run: id, Step: 1, Attempt: 1, Skill: "deliver-prd", Prompt: prompt},
//		func(p engine.Progress) { log.Printf("turn %d", p.Turns) })
//	// out.Artifact is the agent's stdout; out.Err, out.ExitCode or out.AgentError say it failed
package runner
