package runner

import (
	"context"
	"io"

	"github.com/gonogo/gonogo/engine"
)

// Command runs any executable, through no shell, for a step: the prompt on
// stdin, the job in GONOGO_RUN_ID, GONOGO_STEP (1-based), GONOGO_ATTEMPT and
// GONOGO_SKILL, GONOGO_SKILL_DIR (the skill's folder, when known; and a
// workflow step's runner options as GONOGO_OPT_<NAME>),
// and stdout as the artifact. A non-zero exit comes back as
// Outcome.ExitCode with the end of stderr in Outcome.Stderr.
type Command struct {
	cfg Config
}

// NewCommand returns the command runner; cfg.Cmd is the executable and
// cfg.Args its arguments.
func NewCommand(cfg Config) *Command { return &Command{cfg: cfg} }

// Check reports whether the executable can be found, so a misconfiguration
// shows before the first step instead of failing it.
func (c *Command) Check() error { return check(c.cfg.Cmd) }

// Run implements engine.Runner. It reports no progress: the output of an
// arbitrary command says nothing about how far along it is.
func (c *Command) Run(ctx context.Context, job engine.Job, _ func(engine.Progress)) engine.Outcome {
	if job.DryRun {
		return engine.Outcome{NotRun: true}
	}
	var artifact []byte
	max := c.cfg.maxOutput()
	x := runProcess(ctx, spec{
		cmd:     c.cfg.Cmd,
		args:    c.cfg.Args,
		env:     environ("", c.cfg, job),
		dir:     c.cfg.Dir,
		stdin:   job.Prompt,
		timeout: c.cfg.stepTimeout(job),
		grace:   c.cfg.killGrace(),
		agents:  c.cfg.AgentsDir,
	}, func(r io.Reader) error {
		var err error
		artifact, err = readCapped(r, max)
		return err
	})
	o := x.outcome(c.cfg.Cmd)
	o.Artifact = artifact
	o.Stderr = secretValues(c.cfg.Env).redact(o.Stderr)
	return o
}
