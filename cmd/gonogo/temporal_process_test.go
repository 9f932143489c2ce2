//go:build temporal

package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/internal/terminal"
)

// Against a real Temporal server in a process of its own (GONOGO_TEMPORAL_SERVER
// names the binary), each command a process as a person would type it:
// setup returns once the cluster takes a run using gonogo's search
// attributes, and a run started that moment works; run with no worker says
// so and Ctrl-C leaves the run on the cluster; the read commands answer
// with no worker; pause, resume, decide and abort from other shells take
// effect; with the server gone, the reads say they cannot reach it.
func TestTemporalServerProcessCommands(t *testing.T) {
	srv := startServerProcess(t)
	gates := t.TempDir()
	// measure-experiment-design waits for a gate, so a run can be paused
	// while its step runs; every step answers with its skill's example.
	standIn := filepath.Join(exampleDir(t), "..", "..", "..", "deploy", "stand-in-agent.sh")
	agent := writeAgent(t, `if [ "$GONOGO_SKILL" = measure-experiment-design ]; then
  touch `+filepath.Join(gates, "started")+`
  while [ ! -f `+filepath.Join(gates, "go")+` ]; do sleep 0.05; done
fi
exec `+standIn+"\n")
	sh := newShell(t, srv.addr, agent)

	setupOnceReachable(t, sh, srv)
	first := runWithNoWorker(t, sh)

	// The way to follow it again that Ctrl-C printed works once a worker
	// starts: the run started the moment setup returned completes.
	worker := startHolder(t, sh.elsewhere(t), "worker")
	res := subprocess(t, sh, "approve\napprove\n", "resume", first)
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Run complete") {
		t.Fatalf("resume %s once a worker runs: exit %d\n%s%s", first, res.code, res.stdout, res.stderr)
	}
	if r, _ := sh.show(t, first); r.State != string(engine.RunCompleted) {
		t.Fatalf("the run started right after setup is %q after resume, want completed", r.State)
	}

	// A run left waiting at its second step, with both steps' artifacts
	// written by the worker; then the worker stops.
	res = subprocess(t, sh, "approve\n", "run", "--chain", "define-problem-statement -> deliver-prd -- saved searches")
	m := regexp.MustCompile(`gonogo run (\S+)\n`).FindStringSubmatch(res.stdout)
	if res.code != terminal.ExitWaiting || m == nil || !strings.Contains(res.stdout, "Run waiting for a decision at Step 2 of 2: deliver-prd\nContinue with: gonogo resume "+m[1]) {
		t.Fatalf("run left at its second step: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	waiting := m[1]
	stopWorker(t, worker)
	readsWithNoWorker(t, sh.elsewhere(t), first, waiting)

	// From other shells, with a worker again.
	startHolder(t, sh.elsewhere(t), "worker")
	decideFromAnotherShell(t, sh, sh.elsewhere(t), waiting)
	pauseAndResumeFromAnotherShell(t, sh, sh.elsewhere(t), gates)

	srv.kill(t)
	for _, args := range [][]string{{"runs"}, {"show", first}, {"show", "--json", first}, {"show", first, "--artifact", "1"}, {"export", first}} {
		res := subprocess(t, sh, "", args...)
		if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "cannot reach Temporal at GONOGO_TEMPORAL_ADDR="+srv.addr) {
			t.Errorf("%s with the server killed: exit %d, want %d saying it cannot reach the cluster\n%s%s",
				strings.Join(args, " "), res.code, terminal.ExitUsage, res.stdout, res.stderr)
		}
	}
}

// setupOnceReachable waits until the server answers (doctor finds no
// namespace yet), then runs gonogo temporal setup once: it must create the
// namespace, add the attributes and wait for the cluster to take a run
// that uses them.
func setupOnceReachable(t *testing.T, sh shell, srv *serverProcess) {
	t.Helper()
	deadline := hangguard.Deadline(t)
	for {
		res := subprocess(t, sh, "", "doctor", "--dry-run")
		if strings.Contains(res.stdout, "namespace gonogo does not exist: run gonogo temporal setup") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server at %s never answered doctor: exit %d\n%s%s", srv.addr, res.code, res.stdout, res.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	res := subprocess(t, sh, "", "temporal", "setup")
	for _, want := range []string{"namespace gonogo: created", "search attributes: added GonogoChannel, GonogoStarter, GonogoState",
		"a run using them: accepted (waited ", "Temporal at " + srv.addr + " is ready for gonogo."} {
		if res.code != terminal.ExitOK || !strings.Contains(res.stdout, want) {
			t.Fatalf("temporal setup: exit %d, want %q\n%s%s", res.code, want, res.stdout, res.stderr)
		}
	}
}

// runWithNoWorker starts a run the moment setup returned, with no worker
// on the cluster: gonogo run says so and waits; Ctrl-C leaves the run on
// the cluster and says how to follow it. It returns the run's id.
func runWithNoWorker(t *testing.T, sh shell) string {
	t.Helper()
	h := startHolder(t, sh, "run", "--chain", "define-problem-statement -> deliver-prd -- saved searches")
	m := waitFor(t, h.out, regexp.MustCompile(`No gonogo worker polls Temporal at \S+ \(namespace gonogo\) now: the run waits until one starts\.\n`+
		`Start one with: gonogo worker[^\n]*\nCtrl-C leaves the run on the cluster; follow it again with: gonogo resume (\S+)\n`), "the no-worker note")
	id := m[1]
	select {
	case err := <-h.exited:
		t.Fatalf("run ended (%v) instead of waiting for a worker:\n%s", err, h.out.String())
	default:
	}
	// Nothing ran: no worker took the step.
	if r, res := sh.show(t, id); res.code != terminal.ExitOK || r.State == string(engine.RunCompleted) || len(r.Steps) != 2 || len(r.Steps[0].Attempts) != 0 {
		t.Fatalf("show --json of the run no worker took: exit %d, state %q, steps %+v\n%s", res.code, r.State, r.Steps, res.stderr)
	}
	if err := h.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := h.wait(t)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != terminal.ExitWaiting || !strings.Contains(h.out.String(), "Follow it again with: gonogo resume "+id) {
		t.Fatalf("run after Ctrl-C: %v, want exit %d saying how to follow the run\n%s", err, terminal.ExitWaiting, h.out.String())
	}
	// Left on the cluster: another shell lists it, not finished.
	if res := subprocess(t, sh, "", "runs"); res.code != terminal.ExitOK || !strings.Contains(res.stdout, id) {
		t.Fatalf("runs after Ctrl-C: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	return id
}

// stopWorker stops a worker as Ctrl-C would, and waits for it to end.
func stopWorker(t *testing.T, w *holder) {
	t.Helper()
	if err := w.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := w.wait(t); err != nil {
		t.Fatalf("the worker stopped with %v:\n%s", err, w.out.String())
	}
}

// readsWithNoWorker checks runs --json, then each run's other reads, of a
// completed and a waiting run with no worker polling: each answers from
// what the cluster and the artifact store keep.
func readsWithNoWorker(t *testing.T, sh shell, completed, waiting string) {
	t.Helper()
	var lines []jsonRunLine
	began := time.Now()
	res := subprocess(t, sh, "", "runs", "--json")
	t.Logf("runs --json with no worker answered in %v", time.Since(began).Round(time.Millisecond))
	if res.code != terminal.ExitOK || json.Unmarshal([]byte(res.stdout), &lines) != nil {
		t.Fatalf("runs --json with no worker: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	states := map[string]string{}
	for _, l := range lines {
		states[l.ID] = l.State
	}
	if states[completed] != string(engine.RunCompleted) || states[waiting] != string(engine.RunWaiting) {
		t.Errorf("runs --json with no worker: states %v, want %s completed and %s waiting", states, completed, waiting)
	}
	for _, id := range []string{completed, waiting} {
		began := time.Now()
		readWithNoWorker(t, sh, id, states[id])
		// Reported, not asserted: the figure docs/temporal.md quotes.
		t.Logf("the %s run's five reads with no worker answered in %v", states[id], time.Since(began).Round(time.Millisecond))
	}
}

// readWithNoWorker checks show, show --json, show --artifact and export of
// run id, in state, with no worker polling: both its steps hold their
// skill's example, as the stand-in agent wrote it.
func readWithNoWorker(t *testing.T, sh shell, id, state string) {
	t.Helper()
	r, res := sh.show(t, id)
	if res.code != terminal.ExitOK || r.State != state || len(r.Steps) != 2 {
		t.Fatalf("show --json %s with no worker: exit %d, state %q, want %q\n%s", id, res.code, r.State, state, res.stderr)
	}
	text := subprocess(t, sh, "", "show", id)
	if text.code != terminal.ExitOK || !strings.Contains(text.stdout, id) || !strings.Contains(text.stdout, state) {
		t.Errorf("show %s with no worker: exit %d\n%s%s", id, text.code, text.stdout, text.stderr)
	}
	exp := subprocess(t, sh, "", "export", id, "--format", "md")
	if exp.code != terminal.ExitOK || !strings.Contains(exp.stdout, "# Audit trail of run "+id) {
		t.Errorf("export %s with no worker: exit %d\n%s%s", id, exp.code, exp.stdout, exp.stderr)
	}
	for n, skill := range []string{"define-problem-statement", "deliver-prd"} {
		want := example(t, skill)
		step := r.Steps[n]
		if len(step.Attempts) != 1 || step.Attempts[0].SHA256 == nil || *step.Attempts[0].SHA256 != sha256Hex(want) {
			t.Errorf("show --json %s: step %d's attempts %+v, want one holding its skill's example (sha256 %s)", id, n+1, step.Attempts, sha256Hex(want))
		}
		art := subprocess(t, sh, "", "show", id, "--artifact", strconv.Itoa(n+1))
		if art.code != terminal.ExitOK || art.stdout != want {
			t.Errorf("show %s --artifact %d with no worker: exit %d\n%s%s", id, n+1, art.code, art.stdout, art.stderr)
		}
		if !strings.Contains(exp.stdout, sha256Hex(want)) {
			t.Errorf("export %s lacks step %d's artifact digest %s", id, n+1, sha256Hex(want))
		}
	}
}

// decideFromAnotherShell approves the waiting run's last step from a shell
// that did not start it: the run completes with that decision.
func decideFromAnotherShell(t *testing.T, sh, other shell, waiting string) {
	t.Helper()
	res := subprocess(t, other, "", "decide", waiting, "approve")
	if res.code != terminal.ExitOK {
		t.Fatalf("decide %s approve: exit %d\n%s%s", waiting, res.code, res.stdout, res.stderr)
	}
	r := other.waitShown(t, waiting, "completed", func(r jsonRun) bool { return r.State == string(engine.RunCompleted) })
	if d := r.Steps[1].Decision; d == nil || *d != string(engine.DecideApprove) {
		t.Errorf("step 2 of %s after decide approve: decision %v", waiting, d)
	}

	// abort, as a decision from another shell, ends a run left waiting.
	res = subprocess(t, sh, "", "run", "--chain", "define-problem-statement -- saved searches")
	m := regexp.MustCompile(`gonogo run (\S+)\n`).FindStringSubmatch(res.stdout)
	if res.code != terminal.ExitWaiting || m == nil {
		t.Fatalf("a run left waiting at its step: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := subprocess(t, other, "", "decide", m[1], "abort"); res.code != terminal.ExitOK {
		t.Fatalf("decide %s abort: exit %d\n%s%s", m[1], res.code, res.stdout, res.stderr)
	}
	other.waitShown(t, m[1], "aborted", func(r jsonRun) bool { return r.State == string(engine.RunAborted) })
}

// pauseAndResumeFromAnotherShell pauses a run in guarded auto while its
// first step runs, from a shell other than the one that started it (and
// stopped following it): the step ends and the run holds; resume from a
// third shell carries it to the end. Each shell has its own data folder,
// as on another machine.
func pauseAndResumeFromAnotherShell(t *testing.T, sh, other shell, gates string) {
	t.Helper()
	h := startHolder(t, sh, "run", "--force-auto", "--chain", "measure-experiment-design -> define-problem-statement -- saved searches")
	id := waitFor(t, h.out, regexp.MustCompile(`gonogo run (\S+)\n`), "the run's id")[1]
	waitFile(t, filepath.Join(gates, "started"), "the gated step to start")
	if err := h.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = h.wait(t)

	res := subprocess(t, other, "", "pause", id)
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Run "+id+" paused by tester") {
		t.Fatalf("pause %s: exit %d\n%s%s", id, res.code, res.stdout, res.stderr)
	}
	if err := os.WriteFile(filepath.Join(gates, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// In guarded auto, step 1 waits only because the run is paused.
	held := other.waitShown(t, id, "held at step 1", func(r jsonRun) bool { return r.Steps[0].Status == string(engine.StepWaiting) })
	if !held.Paused || held.PausedBy != "tester" || held.Steps[1].Status != string(engine.StepPending) {
		t.Fatalf("the paused run: paused %v by %q, step 2 %s", held.Paused, held.PausedBy, held.Steps[1].Status)
	}
	res = subprocess(t, other.elsewhere(t), "", "resume", id)
	if res.code != terminal.ExitOK {
		t.Fatalf("resume %s: exit %d\n%s%s", id, res.code, res.stdout, res.stderr)
	}
	if r, _ := other.show(t, id); r.State != string(engine.RunCompleted) || r.Paused {
		t.Errorf("the resumed run: state %q, paused %v; want completed, not paused", r.State, r.Paused)
	}
}

// example is the sample artifact of the built-in example's skill, which
// the stand-in agent answers with.
func example(t *testing.T, skill string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(exampleDir(t), "skills", skill, "references", "EXAMPLE.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitFile waits until path exists; its bound only guards against a hang.
func waitFile(t *testing.T, path, what string) {
	t.Helper()
	deadline := hangguard.Deadline(t)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s (%s)", what, path)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
