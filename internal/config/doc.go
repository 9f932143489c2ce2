// Package config owns gonogo's settings: the GONOGO_* environment (Config,
// read by Load; gonogo serve's own, Slack; the GONOGO_TEMPORAL_* cluster
// settings, Temporal, read by LoadTemporal), checked by Process before
// go-envconfig reads it, so that a malformed number, duration or size is
// refused naming the variable, what it holds and a good value; what the
// settings make of an agent runner (Config.RunnerConfig; GONOGO_RUNNER_ARGS
// split as a shell would; AgentMissing); who a person at the terminal is
// (Actor); and the setup recorded with a run (Config.Setup), which a resume
// reads back and changes only where a flag says so (Config.Resume).
//
// It may import engine, parse, internal/runner, internal/terminal (to
// quote a path as a hint prints it), go-envconfig and go-shellwords, and
// nothing that opens a store or talks to a network. The
// command line (a flag wins over its variable) and the data directory are
// the command's.
//
//	cfg, err := config.Load(ctx, envconfig.OsLookuper())
//	if err != nil {
//		return err // "configuration: GONOGO_STEP_TIMEOUT="10" is not a duration with a unit (s, m or h); ..."
//	}
//	rcfg, err := cfg.RunnerConfig(cfg.RunnerCmd, filepath.Join(cfg.DataDir, "agents"))
package config
