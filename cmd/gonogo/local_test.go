package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/storage"
)

// subprocess runs the test binary as gonogo (see TestMain) with env.
func subprocess(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// waitFor polls the output of a running gonogo until it matches re.
func waitFor(t *testing.T, out *syncBuffer, re *regexp.Regexp, what string) []string {
	t.Helper()
	deadline := hangguard.Deadline(t)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("gave up waiting for %s; output so far:\n%s", what, out.String())
	return nil
}

// holder is a gonogo run in a process of its own, holding a data
// directory, its stdin open and silent: nobody types.
type holder struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan error
}

func startHolder(t *testing.T, env []string, args ...string) *holder {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := &holder{cmd: exec.Command(self, args...), out: &syncBuffer{}, exited: make(chan error, 1)}
	h.cmd.Env = env
	stdin, err := h.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	h.cmd.Stdout, h.cmd.Stderr = h.out, h.out
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.exited <- h.cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		_ = h.cmd.Process.Kill()
		h.exited <- <-h.exited
	})
	return h
}

// wait waits for the holder to end and returns how it ended.
func (h *holder) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-h.exited:
		h.exited <- err
		return err
	case <-time.After(hangguard.Limit(t)):
		t.Fatalf("the holder did not finish:\n%s", h.out.String())
		return nil
	}
}

// TestReadAndDecideWhileAnotherGonogoHoldsTheData runs gonogo run as a real
// process holding the data directory, and from a second process lists the
// runs, shows one, prints an artifact and decides; the first process must
// carry on as if the decision were typed.
func TestReadAndDecideWhileAnotherGonogoHoldsTheData(t *testing.T) {
	data := t.TempDir()
	agent := writeAgent(t, `cat >/dev/null
printf '# %s\n\nStep %s, made by the fake agent.\n' "$GONOGO_SKILL" "$GONOGO_STEP"`)
	env := append(os.Environ(), "GONOGO_TEST_AS_MAIN=1", "GONOGO_DATA_DIR="+data,
		"GONOGO_SKILLS_DIR="+filepath.Join(exampleDir(t), "skills"), "USER=second")
	// An earlier run, left waiting.
	chain := []string{"run", "--runner", "command", "--runner-cmd", agent, "--chain", "define-problem-statement -> deliver-prd -- saved searches"}
	earlier := subprocess(t, env, "", chain...)
	if earlier.code != terminal.ExitWaiting {
		t.Fatalf("earlier run: exit %d\n%s%s", earlier.code, earlier.stdout, earlier.stderr)
	}
	other := regexp.MustCompile(`gonogo run (\S+)`).FindStringSubmatch(earlier.stdout)[1]

	h := startHolder(t, append(append([]string{}, env...), "USER=first"), chain...)
	id := waitFor(t, h.out, regexp.MustCompile(`gonogo run (\S+)`), "the run id")[1]
	waitFor(t, h.out, regexp.MustCompile(`Step 1 of 2: define-problem-statement[\s\S]*Result:\s+PRODUCED`), "step 1's result")

	// The store is locked: reads go through the holder's socket.
	checkReadsThroughHolder(t, env, id, agent)

	// A decision on the earlier run is recorded, not carried out: the
	// holder runs only its own run.
	if res := subprocess(t, env, "", "decide", other, "approve"); res.code != 0 || !strings.Contains(res.stdout, "which carries out another run") {
		t.Fatalf("decide the earlier run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	var shown jsonRun
	if res := subprocess(t, env, "", "show", "--json", other); json.Unmarshal([]byte(res.stdout), &shown) != nil ||
		shown.Steps[0].Status != "done" || shown.Steps[1].Status != "pending" {
		t.Fatalf("the earlier run after the decision: %+v", shown.Steps)
	}

	// A decision for an attempt that is not the latest is refused; the
	// right one is carried out by the holder, which moves on.
	if res := subprocess(t, env, "", "decide", id, "approve", "--attempt", "2"); res.code != terminal.ExitRefused {
		t.Fatalf("stale decide: exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	dec := subprocess(t, env, "", "decide", id, "approve", "--key", "k-1")
	if dec.code != 0 || !strings.Contains(dec.stdout, "gonogo run (pid") {
		t.Fatalf("decide approve: exit %d\n%s%s", dec.code, dec.stdout, dec.stderr)
	}
	waitFor(t, h.out, regexp.MustCompile(`✓ Step 1 of 2: define-problem-statement: approve by second`), "the holder to show the decision")
	waitFor(t, h.out, regexp.MustCompile(`Step 2 of 2: deliver-prd[\s\S]*Result:\s+PRODUCED`), "the holder to run step 2")
	// The same key again applies nothing.
	if res := subprocess(t, env, "", "decide", id, "approve", "--key", "k-1"); res.code != 0 || !strings.Contains(res.stdout, "Already decided") {
		t.Fatalf("repeated key: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := subprocess(t, env, "", "decide", id, "approve"); res.code != 0 {
		t.Fatalf("decide step 2: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if err := h.wait(t); err != nil || !strings.Contains(h.out.String(), "Run complete: "+id) {
		t.Fatalf("the holder ended with %v, not completing the run:\n%s", err, h.out.String())
	}
	if _, err := os.Lstat(filepath.Join(data, localapi.SocketName)); !os.IsNotExist(err) {
		t.Fatalf("the socket outlived its gonogo: %v", err)
	}
	// Nobody holds the data now: decide opens the store and finds nothing
	// waiting.
	if res := subprocess(t, env, "", "decide", id, "approve"); res.code != terminal.ExitRefused {
		t.Fatalf("decide on a completed run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// checkReadsThroughHolder runs runs --json, show --json and show
// --artifact while another gonogo holds the data.
func checkReadsThroughHolder(t *testing.T, env []string, id, agent string) {
	t.Helper()
	runs := subprocess(t, env, "", "runs", "--json")
	var list []jsonRunLine
	if err := json.Unmarshal([]byte(runs.stdout), &list); runs.code != 0 || err != nil {
		t.Fatalf("runs --json: exit %d, %v\n%s%s", runs.code, err, runs.stdout, runs.stderr)
	}
	// Two runs started in one second may list either way round.
	if len(list) != 2 || !slices.ContainsFunc(list, func(l jsonRunLine) bool { return l.ID == id && l.State == "waiting" }) {
		t.Fatalf("runs --json = %+v, want run %s waiting among two", list, id)
	}
	// The way on from a held run is decide: resume cannot open the store.
	if text := subprocess(t, env, "", "show", id); text.code != 0 ||
		!strings.Contains(text.stdout, "Continue:   gonogo decide "+id+" approve|skip|redo|abort") || strings.Contains(text.stdout, "gonogo resume") {
		t.Fatalf("show of a held run: exit %d\n%s%s", text.code, text.stdout, text.stderr)
	}
	show := subprocess(t, env, "", "show", "--json", id)
	var run jsonRun
	if err := json.Unmarshal([]byte(show.stdout), &run); show.code != 0 || err != nil {
		t.Fatalf("show --json: exit %d, %v\n%s%s", show.code, err, show.stdout, show.stderr)
	}
	a := run.Steps[0].Attempts[0]
	if a.Artifact == nil || a.SHA256 == nil || a.StoreOnly {
		t.Fatalf("attempt 1 = %+v, want a file and a digest", a)
	}
	file, err := os.ReadFile(*a.Artifact)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(file); hex.EncodeToString(sum[:]) != *a.SHA256 {
		t.Fatalf("sha256 %s is not the file's", *a.SHA256)
	}
	if run.Setup == nil || run.Setup.Runner != "command" || run.Setup.RunnerCmd != agent {
		t.Fatalf("setup = %+v, want the command runner with %s", run.Setup, agent)
	}
	if comp := subprocess(t, env, "", "__complete", "show", ""); !strings.Contains(comp.stdout, id) {
		t.Errorf("completion does not offer the held run %s:\n%s%s", id, comp.stdout, comp.stderr)
	}
	art := subprocess(t, env, "", "show", id, "--artifact", "1")
	if art.code != 0 || art.stdout != string(file) {
		t.Fatalf("show --artifact 1: exit %d, printed %q, want the file %q (%s)", art.code, art.stdout, file, art.stderr)
	}
	exp := subprocess(t, env, "", "export", id)
	var trail struct {
		Steps []struct {
			Attempts []struct {
				Artifact *struct{ SHA256 string }
			}
		}
	}
	if err := json.Unmarshal([]byte(exp.stdout), &trail); exp.code != 0 || err != nil || len(trail.Steps) != 2 ||
		len(trail.Steps[0].Attempts) != 1 || trail.Steps[0].Attempts[0].Artifact == nil || trail.Steps[0].Attempts[0].Artifact.SHA256 != *a.SHA256 {
		t.Fatalf("export of a held run: exit %d, %v\n%s%s", exp.code, err, exp.stdout, exp.stderr)
	}
}

func TestALockedStoreWithNobodyAnswering(t *testing.T) {
	wait := localapi.HolderWait
	localapi.HolderWait = 100 * time.Millisecond
	t.Cleanup(func() { localapi.HolderWait = wait })
	vars := baseVars(t)
	// A gonogo from before the local API: it holds the lock, serves nothing.
	db, err := storage.Open(vars["GONOGO_DATA_DIR"], storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, args := range [][]string{{"runs"}, {"show", "r1"}, {"decide", "r1", "approve"}} {
		res := gonogo(t, vars, "", args...)
		if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "does not answer on") {
			t.Errorf("%v: exit %d, %s", args, res.code, res.stderr)
		}
	}
}
