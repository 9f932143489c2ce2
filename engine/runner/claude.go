package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
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
	opts, err := claudeOptions(job.Options)
	if err != nil {
		return engine.Outcome{Err: err}
	}
	start := time.Now()
	var st stream
	report := throttle(start, progress)
	max := c.cfg.maxOutput()
	x := runProcess(ctx, spec{
		cmd:     c.cfg.Cmd,
		args:    append(append(append([]string(nil), claudeArgs...), opts...), c.cfg.Args...),
		env:     environ(c.cfg.Env, job),
		dir:     c.cfg.Dir,
		stdin:   job.Prompt,
		timeout: c.cfg.stepTimeout(job),
		grace:   c.cfg.killGrace(),
		agents:  c.cfg.AgentsDir,
	}, func(r io.Reader) error {
		return readLines(r, max, func(line []byte) {
			turn := st.add(line)
			p := engine.Progress{Turns: st.turns, ToolCalls: st.toolCalls, LastTool: st.lastTool}
			if st.result != nil {
				p.CostUSD = st.result.TotalCostUSD
			}
			report(p, turn || st.result != nil)
		})
	})

	o := x.outcome(c.cfg.Cmd)
	if r := st.result; r != nil {
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
			o.AgentError = subtypeError(r)
		case r.IsError:
			// An agent that cannot work at all (no login, no credit) still
			// ends with subtype success; the result text says why.
			o.AgentError = strings.TrimSpace(r.Result)
			if o.AgentError == "" {
				o.AgentError = "agent reported an error"
			}
		default:
			o.Artifact = []byte(r.Result)
		}
		return o
	}
	if o.Err == nil {
		o.Err = noResultError(st, x)
	}
	return o
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

// claudeOptions turns runner options into claude flags, in name order. An
// option claude has no flag for fails the attempt rather than being
// dropped unseen.
func claudeOptions(opts map[string]string) ([]string, error) {
	names := make([]string, 0, len(opts))
	for k := range opts {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, k := range names {
		flag, ok := claudeFlags[k]
		if !ok {
			known := make([]string, 0, len(claudeFlags))
			for n := range claudeFlags {
				known = append(known, n)
			}
			sort.Strings(known)
			return nil, fmt.Errorf("runner option %q is not one the claude runner knows (%s)", k, strings.Join(known, ", "))
		}
		out = append(out, flag, opts[k])
	}
	return out, nil
}

// subtypeError describes a result that did not succeed
// (error_during_execution, error_max_turns, ...).
func subtypeError(r *resultEvent) string {
	name := r.Subtype
	if name == "" {
		name = "(none)"
	}
	msg := "agent stopped with " + name
	var details []string
	for _, e := range r.Errors {
		if e = strings.TrimSpace(e); e != "" {
			details = append(details, e)
		}
	}
	if len(details) == 0 && strings.TrimSpace(r.Result) != "" {
		details = append(details, strings.TrimSpace(r.Result))
	}
	if len(details) > 0 {
		msg += ": " + strings.Join(details, "; ")
	}
	return msg
}

// errNoResult is behind the error of a stream that ended without a result.
var errNoResult = errors.New("agent ended without a result event")

func noResultError(st stream, x exit) error {
	var notes []string
	if x.code > 0 {
		notes = append(notes, fmt.Sprintf("exit status %d", x.code))
	}
	switch {
	case st.events == 0 && st.garbage == 0:
		notes = append(notes, "no output")
	case st.garbage > 0:
		notes = append(notes, fmt.Sprintf("%d of %d lines were not stream-json", st.garbage, st.garbage+st.events))
	}
	msg := ""
	if len(notes) > 0 {
		msg = " (" + strings.Join(notes, ", ") + ")"
	}
	return fmt.Errorf("%w%s%s", errNoResult, msg, lastLine(x.stderr))
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
