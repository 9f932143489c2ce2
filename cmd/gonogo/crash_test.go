package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/storage"
)

// TestMain lets the test binary stand in for the gonogo binary, so the
// crash test runs gonogo as a real subprocess without a separate build.
func TestMain(m *testing.M) {
	if os.Getenv("GONOGO_TEST_AS_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

var ackRE = regexp.MustCompile(`✓ Step (\d+) of \d+: .*: (approve|edit|skip|redo|abort)(?: \(attempt (\d+)\))?`)

type ack struct {
	step, attempt int
	kind          engine.DecisionKind
}

// TestCrashCampaign runs gonogo as a subprocess and SIGKILLs it at random
// moments, mid-step and mid-decision, over and over. After every kill the
// store must open, journals must be contiguous and rebuild the snapshot,
// every acknowledged decision must be there exactly once, no attempt may
// have been run twice, the files on disk must match the store, and a step
// that was running must be offered for redo. Finally gonogo resume
// completes the run. GONOGO_LONG=1 runs 200 kills instead of a handful.
func TestCrashCampaign(t *testing.T) {
	kills := 8
	if os.Getenv("GONOGO_LONG") != "" {
		kills = 200
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	log := filepath.Join(t.TempDir(), "agent.log")
	agent := writeAgent(t, `cat >/dev/null
echo "start $GONOGO_STEP $GONOGO_ATTEMPT" >> `+log+`
sleep 0.$(( $(od -An -N1 -tu1 /dev/urandom) % 4 ))
printf '# %s, attempt %s\n\nA paragraph of real work.\n' "$GONOGO_SKILL" "$GONOGO_ATTEMPT"`)
	skills := filepath.Join(exampleDir(t), "skills")
	environ := append(os.Environ(), "GONOGO_TEST_AS_MAIN=1", "GONOGO_DATA_DIR="+data, "GONOGO_SKILLS_DIR="+skills,
		"GONOGO_RUNNER=command", "GONOGO_RUNNER_CMD="+agent, "USER=crash")
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	acked := map[ack]bool{}
	var id string
	for i := 0; i <= kills; i++ {
		args := []string{"run", "--chain", "define-problem-statement -> deliver-prd -> measure-experiment-design -> deliver-prd -- saved searches"}
		if id != "" {
			args = []string{"resume", id}
		}
		var stdin strings.Builder
		for j := 0; j < 12; j++ {
			if rng.IntN(4) == 0 {
				stdin.WriteString("redo try again\n")
			} else {
				stdin.WriteString("approve\n")
			}
		}
		final := i == kills
		if final {
			// No more kills: answer what the run is waiting on, then approve.
			stdin.Reset()
			if id != "" && needsRedo(t, data, engine.RunID(id)) {
				stdin.WriteString("redo\n")
			}
			stdin.WriteString(strings.Repeat("approve\n", 12))
		}
		cmd := exec.Command(self, args...)
		cmd.Env = environ
		cmd.Stdin = strings.NewReader(stdin.String())
		out := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if !final {
			time.Sleep(time.Duration(20+rng.IntN(900)) * time.Millisecond)
			_ = cmd.Process.Signal(syscall.SIGKILL)
		}
		err := cmd.Wait()
		text := out.String()
		if id == "" {
			if m := regexp.MustCompile(`gonogo run (\S+)`).FindStringSubmatch(text); m != nil {
				id = m[1]
			}
		}
		for _, m := range ackRE.FindAllStringSubmatch(text, -1) {
			a := ack{kind: engine.DecisionKind(m[2]), attempt: 1}
			a.step, _ = strconv.Atoi(m[1])
			if m[3] != "" {
				a.attempt, _ = strconv.Atoi(m[3])
			}
			acked[a] = true
		}
		if final {
			if err != nil || !strings.Contains(text, "Run complete") {
				t.Fatalf("final resume: %v\n%s", err, text)
			}
		}
		if id == "" {
			continue // killed before the run was recorded
		}
		verifyStore(t, data, engine.RunID(id), acked, final)
	}
	verifyAgentLog(t, log)
}

// needsRedo reports whether the run waits on a step that only redo or
// abort can move (a FAILED or interrupted one).
func needsRedo(t *testing.T, data string, id engine.RunID) bool {
	t.Helper()
	db, err := storage.Open(data, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Steps {
		if a := engine.Allowed(&r.Steps[i]); len(a) > 0 {
			return !slices.Contains(a, engine.DecideApprove)
		}
	}
	return false
}

// verifyStore opens the store as a restart would and checks its promises.
func verifyStore(t *testing.T, data string, id engine.RunID, acked map[ack]bool, final bool) {
	t.Helper()
	ctx := context.Background()
	db, err := storage.Open(data, storage.Options{})
	if err != nil {
		t.Fatalf("open after kill: %v", err)
	}
	defer db.Close()
	r, err := db.Load(ctx, id)
	if err != nil {
		t.Fatalf("load after kill: %v", err)
	}
	journal, err := db.Journal(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range journal {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("journal not contiguous: event %d has seq %d", i+1, ev.Seq)
		}
	}
	rebuilt, err := engine.Rebuild(journal)
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	if !reflect.DeepEqual(normalize(rebuilt), normalize(r)) {
		t.Fatalf("snapshot differs from the journal's rebuild:\nsnapshot %+v\nrebuilt  %+v", r, rebuilt)
	}
	seen := map[ack]int{}
	for _, ev := range journal {
		if ev.Type == engine.EvDecision {
			seen[ack{ev.Step, ev.Attempt, ev.Decision}]++
		}
	}
	for a := range acked {
		if seen[a] != 1 {
			t.Fatalf("acknowledged decision %+v is in the journal %d times", a, seen[a])
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("decision %+v applied %d times", k, n)
		}
	}
	for i := range r.Steps {
		s := &r.Steps[i]
		if s.Status == engine.StepRunning {
			t.Fatalf("step %d still running after reopen; it must be interrupted", s.N)
		}
		if s.Status == engine.StepInterrupted && !slices.Contains(engine.Allowed(s), engine.DecideRedo) {
			t.Fatalf("interrupted step %d is not offered for redo", s.N)
		}
		for _, a := range s.Attempts {
			if a.File == "" {
				continue
			}
			disk, err := os.ReadFile(filepath.Join(data, filepath.FromSlash(a.File)))
			if err != nil {
				t.Fatalf("artifact file of step %d attempt %d: %v", s.N, a.N, err)
			}
			stored, err := db.Artifact(ctx, id, s.N, a.N)
			if err != nil || !bytes.Equal(disk, stored) {
				t.Fatalf("file %s does not match the store (%v)", a.File, err)
			}
		}
	}
	if final && r.State != engine.RunCompleted {
		t.Fatalf("run is %s after the final resume", r.State)
	}
}

// normalize drops what a snapshot and a rebuild may legitimately write
// differently (time zones of the same instants); JSON follows the run's
// pointers to the steps.
func normalize(r *engine.Run) string {
	b, err := json.Marshal(r)
	if err != nil {
		return err.Error()
	}
	return strings.ReplaceAll(string(b), "+00:00\"", "Z\"")
}

func verifyAgentLog(t *testing.T, log string) {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatalf("the agent never ran: %v", err)
	}
	defer f.Close()
	starts := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		starts[sc.Text()]++
	}
	for k, n := range starts {
		if n > 1 {
			t.Errorf("%s: the same attempt ran %d times", k, n)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var _ io.Writer = (*syncBuffer)(nil)
