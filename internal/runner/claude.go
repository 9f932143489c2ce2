package runner

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// claudeArgs are the arguments every Claude Code run starts with: print mode
// (prompt on stdin, answer at the end) and the event stream, which needs
// --verbose in print mode.
var claudeArgs = []string{"-p", "--output-format", "stream-json", "--verbose"}

// progressEvery is the least time between two progress reports that do not
// start a new turn.
const progressEvery = 250 * time.Millisecond

// Claude runs Claude Code (or anything speaking its stream-json) for a step.
// The step succeeds only when the process exits 0 and its result event has
// subtype "success" and is_error false.
//
// The output cap applies to each event line, not to the whole stream: the
// stream repeats every tool result of a long session and is read line by
// line, so only the largest event (the result carrying the artifact, as a
// rule) has to fit in memory.
type Claude struct {
	cfg Config
}

// NewClaude returns the claude runner. An empty cfg.Cmd means "claude".
func NewClaude(cfg Config) *Claude {
	if strings.TrimSpace(cfg.Cmd) == "" {
		cfg.Cmd = DefaultClaudeCmd
	}
	return &Claude{cfg: cfg}
}

// Check reports whether the executable can be found, so a misconfiguration
// shows before the first step instead of failing it.
func (c *Claude) Check() error { return check(c.cfg.Cmd) }

// Run implements engine.Runner.
func (c *Claude) Run(ctx context.Context, job engine.Job, progress func(engine.Progress)) engine.Outcome {
	if job.DryRun {
		return engine.Outcome{NotRun: true}
	}
	args, err := c.args(job)
	if err != nil {
		return engine.Outcome{Err: err}
	}
	return runStream(ctx, "claude", c.cfg, job, args, &stream{}, progress)
}

// args are claude's arguments for a job: print mode and the event stream,
// the skill's folder as a directory the agent may read (--add-dir takes
// several directories, so a flag always follows it), the step's options,
// then GONOGO_RUNNER_ARGS.
func (c *Claude) args(job engine.Job) ([]string, error) {
	opts, err := optionArgs("claude", claudeFlags, job.Options)
	if err != nil {
		return nil, err
	}
	args := append([]string(nil), claudeArgs...)
	if job.SkillDir != "" {
		args = append(args, "--add-dir", job.SkillDir)
	}
	args = append(args, opts...)
	return append(args, c.cfg.Args...), nil
}

// claudeFlags maps the runner options a workflow step may give to the
// claude command's flags.
var claudeFlags = map[string]string{
	"model":                "--model",
	"fallback-model":       "--fallback-model",
	"max-turns":            "--max-turns",
	"permission-mode":      "--permission-mode",
	"allowed-tools":        "--allowedTools",
	"append-system-prompt": "--append-system-prompt",
}

// finish implements eventStream. The step succeeds only when the process
// exits 0 and its result event has subtype "success" and is_error false.
func (s *stream) finish(o *engine.Outcome, x exit) {
	r := s.result
	if r == nil {
		if o.Err == nil {
			o.Err = noEndError("a result event", s.events, s.garbage, x)
		}
		return
	}
	// Cost and usage were spent whatever became of the attempt.
	o.CostUSD = r.TotalCostUSD
	o.Usage = engine.Usage{
		InputTokens:  r.Usage.InputTokens,
		OutputTokens: r.Usage.OutputTokens,
		CacheRead:    r.Usage.CacheReadInputTokens,
		CacheCreate:  r.Usage.CacheCreationInputTokens,
		Turns:        r.NumTurns,
	}
	switch {
	case r.Subtype != "success":
		claudeVendor.agentFailed(o, subtypeError(r), "")
	case r.IsError:
		// An agent that cannot work at all (no login, no credit, a rate
		// limit) still ends with subtype success; the result text says
		// why, and the assistant message it made up says what kind.
		msg := strings.TrimSpace(string(r.Result))
		if msg == "" {
			msg = s.errText
		}
		claudeVendor.agentFailed(o, msg, claudeErrorKind(s.errKind, r, msg))
	default:
		o.Artifact = r.Result
	}
}

// claudeErrorKind maps Claude Code's kind of API error (the error field of
// the assistant message it makes up: authentication_failed, billing_error,
// rate_limit, invalid_request, server_error, unknown) and the result's
// terminal_reason and status to an engine.AgentErrorKind.
func claudeErrorKind(kind string, r *resultEvent, msg string) engine.AgentErrorKind {
	switch {
	case r.TerminalReason == "prompt_too_long":
		return engine.AgentErrContextTooLong
	case kind == "authentication_failed" || r.APIErrorStatus == 401:
		return engine.AgentErrAuth
	case kind == "billing_error":
		return engine.AgentErrBilling
	case kind == "rate_limit" || r.APIErrorStatus == 429:
		return engine.AgentErrRateLimit
	case kind == "server_error" || r.APIErrorStatus == 529 || r.APIErrorStatus >= 500:
		return engine.AgentErrOverloaded
	}
	// invalid_request covers a prompt too long as well as a bad request;
	// the words tell them apart.
	return errorKind(msg)
}

// subtypeError describes a result that did not succeed
// (error_during_execution, error_max_turns, ...).
func subtypeError(r *resultEvent) string {
	name := r.Subtype
	if name == "" {
		name = "(none)"
	}
	msg := "agent stopped with " + name
	if details := resultDetails(r); len(details) > 0 {
		msg += ": " + strings.Join(details, "; ")
	}
	return msg
}

// resultDetails is what a result that did not succeed says of why: its
// errors, else its result text.
func resultDetails(r *resultEvent) []string {
	var details []string
	for _, e := range r.Errors {
		if e = strings.TrimSpace(e); e != "" {
			details = append(details, e)
		}
	}
	if result := strings.TrimSpace(string(r.Result)); len(details) == 0 && result != "" {
		details = append(details, result)
	}
	return details
}

// throttle wraps progress so that it is called for every report marked
// urgent (a new turn, the result) and otherwise at most every progressEvery.
// A nil progress yields a no-op.
func throttle(start time.Time, progress func(engine.Progress)) func(p engine.Progress, urgent bool) {
	if progress == nil {
		return func(engine.Progress, bool) {}
	}
	var (
		mu   sync.Mutex
		last = start
	)
	return func(p engine.Progress, urgent bool) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if !urgent && now.Sub(last) < progressEvery {
			return
		}
		last = now
		p.Elapsed = now.Sub(start)
		progress(p)
	}
}

// check resolves an executable the way Run will.
func check(cmd string) error {
	if _, err := exec.LookPath(cmd); err != nil {
		return startError(cmd, err)
	}
	return nil
}
