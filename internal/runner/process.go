package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/gonogo/gonogo/engine"
)

// ioGrace bounds how long Run waits, once the agent's process group is dead,
// for the rest of its output. Only a process that left the group can still
// hold the pipes open by then, and its output is not the agent's.
var ioGrace = time.Second

// spec is one agent process to run.
type spec struct {
	cmd     string // as configured, for messages
	args    []string
	env     []string
	dir     string
	stdin   string
	timeout time.Duration
	grace   time.Duration
	// agents is the folder where the running agent is recorded
	// (Config.AgentsDir), so that a gonogo started after this one died
	// can stop what it left running; "" records nothing.
	agents string
	// stderrLine, when set, is given each line of stderr as it comes
	// (an agent's retry notices), from another goroutine.
	stderrLine func(line string)
}

// exit is how an agent process ended.
type exit struct {
	// err is set when the process could not run or gonogo stopped it: a
	// start failure, ErrTimeout, ErrCancelled or ErrOutputTooLarge.
	err    error
	code   int    // exit code; -1 when it died from a signal or never ran
	signal string // the signal it died from, when gonogo did not stop it
	stderr string // the end of its stderr
}

// outcome is the part of an Outcome every process runner fills the same way.
func (x exit) outcome(cmd string) engine.Outcome {
	o := engine.Outcome{Err: x.err, ExitCode: x.code, Stderr: x.stderr}
	if o.Err == nil && x.signal != "" {
		o.Err = fmt.Errorf("agent %s was killed by %s%s", filepath.Base(cmd), x.signal, lastLine(x.stderr))
	}
	o.Truncated = errors.Is(o.Err, ErrOutputTooLarge)
	return o
}

// runError is a runner failure with a message of its own that still
// matches, through errors.Is, the sentinels and causes it lists: a timeout
// matches ErrTimeout and context.DeadlineExceeded.
type runError struct {
	msg string
	is  []error
}

func (e *runError) Error() string   { return e.msg }
func (e *runError) Unwrap() []error { return e.is }

func timeoutError(d time.Duration) error {
	return &runError{msg: fmt.Sprintf("timed out after %s (GONOGO_STEP_TIMEOUT)", d),
		is: []error{ErrTimeout, context.DeadlineExceeded}}
}

// cancelError describes the end of the caller's context. Its cause (an
// abort, a shutdown) is added when the caller gave one.
func cancelError(ctx context.Context) error {
	msg := "cancelled"
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		msg += ": " + cause.Error()
	}
	return &runError{msg: msg, is: []error{ErrCancelled, ctx.Err()}}
}

// tooLargeError says what passed the output cap.
func tooLargeError(what string, max int64) error {
	return &runError{msg: fmt.Sprintf("%s passed the cap of %s (GONOGO_MAX_ARTIFACT); the agent was stopped", what, sizeText(max)),
		is: []error{ErrOutputTooLarge}}
}

// startError turns a failure to start the agent into a message that names
// the executable and the settings that choose it.
func startError(cmd string, err error) error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return notFoundError(cmd, err)
	}
	// It is there, but may not be run: a folder, or a file without its
	// execute bit.
	if fi, serr := os.Stat(cmd); serr == nil && fi.IsDir() && strings.ContainsRune(cmd, filepath.Separator) {
		return &runError{msg: fmt.Sprintf("agent executable %q is a folder, not an executable (set GONOGO_RUNNER_CMD or --runner-cmd to the executable in it)", cmd),
			is: []error{ErrNotExecutable, err}}
	}
	if errors.Is(err, fs.ErrPermission) {
		return &runError{msg: fmt.Sprintf("agent executable %q is not executable (chmod +x it, or set GONOGO_RUNNER_CMD or --runner-cmd to the executable)", cmd),
			is: []error{ErrNotExecutable, err}}
	}
	return fmt.Errorf("cannot start agent %q (GONOGO_RUNNER_CMD or --runner-cmd): %w", cmd, err)
}

// notFoundError says the agent executable cmd is not there: in PATH, for
// a bare name.
func notFoundError(cmd string, err error) error {
	where := ""
	if !strings.ContainsRune(cmd, filepath.Separator) {
		where = " in PATH"
	}
	return &runError{msg: fmt.Sprintf("agent executable %q not found%s (set GONOGO_RUNNER_CMD or --runner-cmd)", cmd, where),
		is: []error{ErrCommandNotFound, err}}
}

// runProcess runs one agent to its end and hands its stdout to consume,
// which runs on its own goroutine and has returned by the time runProcess
// does. consume returns an error wrapping ErrOutputTooLarge to have the
// agent stopped. Whatever happens, the agent's process group, and what it
// detached from it, have been killed when runProcess returns.
func runProcess(ctx context.Context, s spec, consume func(io.Reader) error) exit {
	if ctx.Err() != nil {
		return exit{err: cancelError(ctx), code: -1}
	}
	cmd, stderr := s.command()
	if cmd.Err != nil {
		return exit{err: startError(s.cmd, cmd.Err), code: -1}
	}
	marker := s.mark(cmd)
	// stdout is a pipe of our own rather than cmd.StdoutPipe, so it can be
	// read while the process runs and given a deadline after it is gone.
	pr, pw, err := os.Pipe()
	if err != nil {
		return exit{err: fmt.Errorf("creating the agent's stdout pipe: %w", err), code: -1}
	}
	defer pr.Close()
	cmd.Stdout = pw
	started, exited := startLocked(cmd)
	err = <-started
	pw.Close()
	if err != nil {
		return exit{err: startError(s.cmd, err), code: -1}
	}
	a := &agent{pgid: cmd.Process.Pid, marker: marker, grace: s.grace}
	a.since, _ = procStart(a.pgid)
	defer s.record(a.pgid, marker)()

	ctx, cancel := context.WithTimeoutCause(ctx, s.timeout, timeoutError(s.timeout))
	defer cancel()
	readDone := make(chan error, 1)
	go func() { readDone <- consume(pr) }()
	leader, reading := a.watch(ctx, readDone, exited)

	killed := a.kill(leader)
	if reading != nil {
		// The writers the agent started are dead, so the reader soon sees
		// EOF; the deadline only matters for a process that left the group
		// and cleared its environment.
		_ = pr.SetReadDeadline(time.Now().Add(ioGrace))
	}
	if !leader.reaped {
		leader.waitErr = cmd.Wait()
	}
	reapAdopted(a.pgid, killed)
	if reading != nil {
		<-reading
	}
	return a.exit(cmd, s.cmd, stderr, leader)
}

// command prepares the agent's process: no shell, stdin from the prompt,
// the end of stderr kept (and each line handed on when asked), a group
// of its own.
func (s spec) command() (*exec.Cmd, *tail) {
	cmd := exec.Command(s.cmd, s.args...)
	cmd.Dir = s.dir
	cmd.Env = s.env
	cmd.Stdin = strings.NewReader(s.stdin)
	stderr := &tail{max: stderrKeep}
	cmd.Stderr = stderr
	if s.stderrLine != nil {
		cmd.Stderr = io.MultiWriter(stderr, &lineWriter{fn: s.stderrLine})
	}
	// The stdin and stderr copies may be held up by a process that left the
	// group; WaitDelay keeps them from holding up Wait.
	cmd.WaitDelay = ioGrace
	ownGroup(cmd)
	return cmd, stderr
}

// agent is a started agent as runProcess watches and stops it.
type agent struct {
	pgid   int    // its group, led by the agent
	marker string // its GONOGO_AGENT_ID
	since  uint64 // when its leader started
	grace  time.Duration

	stopped error            // why gonogo stopped it; nil when it ended by itself
	killAt  <-chan time.Time // when its grace after SIGTERM is over
}

// watch waits for the agent's leader to exit, stopping the agent when ctx
// ends or the output passes its cap. It returns how the leader exited and
// the reader's channel, nil once the reader is done.
func (a *agent) watch(ctx context.Context, reading <-chan error, exited <-chan leaderExit) (leaderExit, <-chan error) {
	for {
		select {
		case err := <-reading:
			reading = nil
			if errors.Is(err, ErrOutputTooLarge) {
				a.stop(err)
			}
		case <-a.untilStopped(ctx):
			a.stop(stopCause(ctx))
		case <-a.killAt:
			a.killAt = nil
			signalGroup(a.pgid, true)
		case leader := <-exited:
			return leader, reading
		}
	}
}

// stop stops the agent for why: SIGTERM to its group and to what it
// detached, then SIGKILL to the group once its grace is over. Only the
// first reason counts.
func (a *agent) stop(why error) {
	if a.stopped != nil {
		return
	}
	a.stopped = why
	signalGroup(a.pgid, false)
	signalMarked(a.marker, a.since, syscall.SIGTERM, nil)
	a.killAt = time.After(a.grace)
}

// untilStopped is ctx's done channel while the agent is not being
// stopped; nil, which never delivers, once it is.
func (a *agent) untilStopped(ctx context.Context) <-chan struct{} {
	if a.stopped != nil {
		return nil
	}
	return ctx.Done()
}

// stopCause is why ctx ending stops the agent: its step timed out, or
// gonogo was cancelled.
func stopCause(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), ErrTimeout) {
		return context.Cause(ctx)
	}
	return cancelError(ctx)
}

// kill ends whatever the agent left running, in its group or detached
// (orphans.go), and returns what it killed outside the group; when gonogo
// stopped the agent, the rest still gets its grace after SIGTERM.
func (a *agent) kill(leader leaderExit) []procStat {
	if a.killAt != nil && !leader.reaped {
		<-a.killAt
	}
	signalGroup(a.pgid, true)
	return killMarked(a.marker, a.since)
}

// exit is how the agent ended, once it has been waited for.
func (a *agent) exit(cmd *exec.Cmd, name string, stderr *tail, leader leaderExit) exit {
	x := exit{err: a.stopped, code: -1, stderr: stderr.String()}
	if ps := cmd.ProcessState; ps != nil {
		x.code = ps.ExitCode()
		if sig := deathSignal(ps); sig != "" && a.stopped == nil {
			x.signal = sig
		}
	} else if x.err == nil && leader.waitErr != nil {
		x.err = fmt.Errorf("waiting for agent %s: %w", filepath.Base(name), leader.waitErr)
	}
	return x
}

// leaderExit is how the wait for the agent's group leader ended.
type leaderExit struct {
	reaped  bool // Wait reaped it (the exit-only wait failed)
	waitErr error
}

// startLocked starts cmd from a goroutine locked to its OS thread for as
// long as the agent's leader runs. The parent-death signal (ownGroup) fires
// when the thread that started the child exits, not when gonogo does; a
// goroutine that stays locked keeps its thread alive and keeps every other
// goroutine off it, so only gonogo's own death can end it early.
//
// started gets the start's error; exited then reports the leader's exit
// without reaping it, so its pid, which is also the group's id, cannot be
// reused before the group is killed. Should that wait fail, Wait reaps it
// instead.
func startLocked(cmd *exec.Cmd) (started <-chan error, exited <-chan leaderExit) {
	st := make(chan error, 1)
	ex := make(chan leaderExit, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			st <- err
			return
		}
		st <- nil
		if waitExited(cmd.Process.Pid) == nil {
			ex <- leaderExit{}
			return
		}
		ex <- leaderExit{reaped: true, waitErr: cmd.Wait()}
	}()
	return st, ex
}

// mark gives the agent its GONOGO_AGENT_ID, by which gonogo finds what it
// started wherever that went (orphans.go, agents.go), and returns it.
func (s spec) mark(cmd *exec.Cmd) string {
	marker := newAgentMarker()
	cmd.Env = append(slices.Clip(orEnviron(s.env)), agentMarkerEnv+"="+marker)
	return marker
}

// record records the agent started as the leader of group pgid, when it
// is to be recorded, and returns what removes the record.
func (s spec) record(pgid int, marker string) (remove func()) {
	if s.agents == "" {
		return func() {}
	}
	rec, err := recordAgent(s.agents, pgid, marker, s.cmd, s.env)
	if err != nil {
		return func() {}
	}
	return rec.remove
}

// orEnviron is env, or gonogo's own environment when env is nil (as
// exec.Cmd reads a nil Env).
func orEnviron(env []string) []string {
	if env == nil {
		return os.Environ()
	}
	return env
}

// tail keeps the last max bytes written to it. The agent's stderr goes
// through it, so a chatty agent costs a bounded amount of memory.
type tail struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		t.dropped = t.dropped || len(t.buf) > 0 || len(p) > t.max
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.dropped = true
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return n, nil
}

// String returns the kept end, starting at a whole character.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
		t.dropped = true
	}
	if t.dropped {
		for i := 0; i < utf8.UTFMax && i < len(b) && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	return string(b)
}

// lastLine returns the last non-blank line of stderr as a suffix for an
// error message ("" when there is none), shortened to a readable length.
func lastLine(stderr string) string {
	const max = 300
	s := strings.TrimSpace(stderr)
	if s == "" {
		return ""
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return ": " + s
}
