package main

import (
	"context"
	"log/slog"

	"github.com/spf13/cobra"

	settings "github.com/gonogo/gonogo/internal/config"
	"github.com/gonogo/gonogo/internal/datadir"
	"github.com/gonogo/gonogo/internal/doctor"
	"github.com/gonogo/gonogo/internal/temporalbackend"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/parse"
)

func newDoctorCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:   "doctor [flags]",
		Short: "Check the agents, the skills and workflows folders and the data directory",
		Long: `Check what gonogo needs before any work starts: for every runner, its agent
executable (found on PATH or not), its version (--version, asked with a short
timeout: "answers --version" means the executable runs, nothing more), whether
it is logged in where the agent CLI can say so without a call to its service
(claude auth status, codex login status; otherwise doctor says login was not
checked), and whether the Node it runs on is one its npm package declares; the
skills folder in use and how many skills can be used, with their problems; the
workflows folder; and the data directory (exists or can be created, writable,
whether its store opens or another gonogo holds it, runs by state). Nothing is
created: a probe file shows a folder writable and is removed at once.

With GONOGO_TEMPORAL_ADDR set it also asks the Temporal cluster: reachable, the
namespace and gonogo's search attributes there (gonogo temporal setup), and how many
gonogo workers take steps now.

Exit codes: 0 a run can start, 1 no run could work (each reason is said: the
configured runner's agent is not installed, does not start or says it is not
logged in; no skills folder or no usable skill; a data directory gonogo cannot
write or whose store does not open; the named cluster not ready), 2 usage error.`,
		RunE:              a.action(f, cmdDoctor),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	a.addJSONFlag(c, f)
	a.addAgentFlags(c, f, "check as for a dry run, which needs no agent")
	return c
}

func cmdDoctor(ctx context.Context, e env, cfg config, f *runFlags) int {
	if len(f.positional) > 0 {
		return fail(e, "doctor", usagef("doctor takes no arguments (got %q)", f.positional[0]))
	}
	rep := doctor.Check(ctx, doctorConfig(ctx, e, cfg, f))
	if f.json {
		if c := writeJSON(e, "doctor", rep); c != terminal.ExitOK {
			return c
		}
	} else {
		doctor.Print(e.stdout, rep)
	}
	if !rep.OK {
		return terminal.ExitRefused
	}
	return terminal.ExitOK
}

// doctorConfig is the set-up the flags and the environment name.
func doctorConfig(ctx context.Context, e env, cfg config, f *runFlags) doctor.Config {
	given := ""
	switch {
	case f.skills != "" && f.skills == cfg.SkillsDir:
		given = "GONOGO_SKILLS_DIR"
	case f.skills != "":
		given = "--skills"
	}
	return doctor.Config{
		Runner:    runnerName(f),
		RunnerCmd: f.runnerCmd,
		Skills: doctor.SkillsConfig{
			Dirs:   cfg.SkillSources(f.skills).Dirs,
			Given:  given,
			Load:   func() (*parse.Catalog, error) { return cfg.LoadSkills(f.skills) },
			Policy: cfg.Policy,
		},
		WorkflowsDir: cfg.WorkflowsDir,
		DataDir:      f.data,
		CheckDataDir: datadir.Check,
		ReapAgents:   func(dir string) { datadir.ReapAgents(dir, slog.Default()) },
		Temporal:     doctorTemporal(ctx, e),
	}
}

// doctorTemporal is the cluster GONOGO_TEMPORAL_ADDR names; nil when unset.
func doctorTemporal(ctx context.Context, e env) *doctor.TemporalConfig {
	tc, err := settings.LoadTemporal(ctx, e.lookup)
	switch {
	case err != nil:
		return &doctor.TemporalConfig{Err: err}
	case tc.Addr == "":
		return nil
	}
	return &doctor.TemporalConfig{Addr: tc.Addr, Namespace: tc.Namespace, Heartbeat: tc.Heartbeat,
		Dial: func(ctx context.Context) (doctor.Cluster, error) {
			c, err := dialTemporal(ctx, tc, quietLogger(e))
			if err != nil {
				return nil, err
			}
			return temporalbackend.NewProbe(c, tc.Namespace), nil
		}}
}
