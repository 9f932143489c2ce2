package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/storage"
)

// The read commands and decide create nothing: a --data that names no
// store (a typo, or nothing run yet) has no runs, and stays absent.
func TestReadCommandsCreateNoDataDirectory(t *testing.T) {
	data := filepath.Join(t.TempDir(), "typo")
	vars := map[string]string{"GONOGO_DATA_DIR": data}
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"runs"}, terminal.ExitOK, "No runs in " + data},
		{[]string{"runs", "--json"}, terminal.ExitOK, "[]"},
		{[]string{"show", "r-1"}, terminal.ExitUsage, "no run r-1 in " + data},
		{[]string{"show", "r-1", "--artifact", "1"}, terminal.ExitUsage, "no run r-1 in " + data},
		{[]string{"decide", "r-1", "approve"}, terminal.ExitUsage, "no run r-1 in " + data},
	}
	for _, c := range cases {
		res := gonogo(t, vars, "", c.args...)
		if res.code != c.code || !strings.Contains(res.stdout+res.stderr, c.msg) {
			t.Errorf("gonogo %s: exit %d\n%s%s\nwant %d and %q", strings.Join(c.args, " "), res.code, res.stdout, res.stderr, c.code, c.msg)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Fatalf("gonogo %s created %s (stat: %v)", strings.Join(c.args, " "), data, err)
		}
	}
}

// auditedStore is a data directory as an auditor gets it: a completed run
// of two steps with their artifacts, and a run whose step 1 is recorded
// running because the gonogo running it was killed.
func auditedStore(t *testing.T) (vars map[string]string, done, killed string) {
	t.Helper()
	vars = baseVars(t)
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat >/dev/null; printf '# %s\n\nthe artifact\n' "$GONOGO_SKILL"`)
	res := gonogo(t, vars, "approve\napprove\n", "run", "--chain", "deliver-prd, define-problem-statement")
	if res.code != terminal.ExitOK {
		t.Fatalf("run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	done = runID(t, res.stdout)

	db, err := storage.Open(vars["GONOGO_DATA_DIR"], storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	plan := engine.Plan{Input: engine.InputChain, Source: "deliver-prd", Steps: []engine.PlanStep{
		{Skill: "deliver-prd", Prompt: "write it", Category: engine.CategoryContent, Execution: engine.ExecDelegate},
		{Skill: "define-problem-statement", Prompt: "say it", Category: engine.CategoryContent, Execution: engine.ExecDelegate},
	}}
	now := time.Now()
	evs, err := engine.NewRun("r-killed", plan, engine.StartOptions{StartedBy: "tester"}, now)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := engine.Fold(&engine.Run{}, evs)
	commit(t, db, engine.Commit{Run: r, Events: evs})
	evs, err = engine.Start(r, 1, now)
	if err != nil {
		t.Fatal(err)
	}
	started, _ := engine.Fold(r, evs)
	commit(t, db, engine.Commit{Run: started, Events: evs, After: r.Seq})
	return vars, done, "r-killed"
}

func commit(t *testing.T, db *storage.DB, c engine.Commit) {
	t.Helper()
	if err := db.Commit(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

// tree reads every file under dir, to show that nothing changed.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readCommands runs the read commands on a store the user may only read
// and checks what they show; gonogo runs as run.
func readCommands(t *testing.T, run func(args ...string) result, done, killed string) {
	t.Helper()
	res := run("runs")
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, done) || !regexp.MustCompile(killed+`\s+interrupted`).MatchString(res.stdout) {
		t.Errorf("runs: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := run("show", done); res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Journal:") {
		t.Errorf("show: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := run("show", done, "--artifact", "2"); res.code != terminal.ExitOK || res.stdout != "# define-problem-statement\n\nthe artifact\n" {
		t.Errorf("show --artifact 2: exit %d\n%q%s", res.code, res.stdout, res.stderr)
	}
	res = run("export", done, "--format", "json")
	var trail map[string]any
	if res.code != terminal.ExitOK || json.Unmarshal([]byte(res.stdout), &trail) != nil {
		t.Errorf("export: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// A step recorded running is shown as recorded, and said to be run by
	// no one: nothing can record it interrupted.
	res = run("show", killed)
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Not running: step 1 (deliver-prd) is recorded running, but no gonogo holds this store") ||
		!strings.Contains(res.stdout, "read-only for you") || strings.Contains(res.stdout, "Queued:") {
		t.Errorf("show of a run killed mid-step: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = run("decide", killed, "abort")
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "may read this store but not write it") {
		t.Errorf("decide: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// A store on a read-only mount: root itself may not write it, and reading
// it works and writes nothing (no recovery, no agents stopped).
func TestReadOnlyMountIsReadable(t *testing.T) {
	vars, done, killed := auditedStore(t)
	data := vars["GONOGO_DATA_DIR"]
	ro := t.TempDir()
	if out, err := exec.Command("mount", "--bind", data, ro).CombinedOutput(); err != nil {
		t.Skipf("cannot bind-mount here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", ro).Run() })
	if out, err := exec.Command("mount", "-o", "remount,bind,ro", ro).CombinedOutput(); err != nil {
		t.Skipf("cannot make the mount read-only: %v %s", err, out)
	}
	before := tree(t, data)
	vars["GONOGO_DATA_DIR"] = ro
	readCommands(t, func(args ...string) result { return gonogo(t, vars, "", args...) }, done, killed)
	if after := tree(t, data); !maps.Equal(after, before) {
		t.Error("reading a read-only mount changed the data directory")
	}
}

// The same as another user, with the real binary: an auditor's account
// given a copy it may read.
func TestAnotherUsersStoreIsReadable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running as another user needs root")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv")
	}
	vars, done, killed := auditedStore(t)
	data := vars["GONOGO_DATA_DIR"]
	// The copy is readable by all, writable by its owner alone.
	readable(t, data)
	bin := filepath.Join(t.TempDir(), "gonogo")
	readable(t, filepath.Dir(bin))
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	before := tree(t, data)
	run := func(args ...string) result {
		cmd := exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin}, args...)...)
		cmd.Env = []string{"GONOGO_TEST_AS_MAIN=1", "GONOGO_DATA_DIR=" + data, "PATH=/usr/bin:/bin", "HOME=/nonexistent"}
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{code, out.String(), errb.String()}
	}
	readCommands(t, run, done, killed)
	if after := tree(t, data); !maps.Equal(after, before) {
		t.Error("reading another user's store changed it")
	}
}

// readable opens dir, everything under it and the folders above it to
// reading by all users.
func readable(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		return os.Chmod(p, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
	for up := filepath.Dir(dir); up != "/" && up != os.TempDir(); up = filepath.Dir(up) {
		if err := os.Chmod(up, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// A gonogo.db that is empty or missing beside runs/ holding runs is never
// replaced by a new one: every command refuses, saying what it found and
// what to do, and leaves it as it is.
func TestLostStoreIsNotReplaced(t *testing.T) {
	for _, lose := range []string{"empty", "missing"} {
		t.Run(lose, func(t *testing.T) {
			vars, _, _ := auditedStore(t)
			data := vars["GONOGO_DATA_DIR"]
			db := filepath.Join(data, storage.FileName)
			if lose == "empty" {
				must(t, os.Truncate(db, 0))
			} else {
				must(t, os.Remove(db))
			}
			before := tree(t, data)
			for _, args := range [][]string{{"runs"}, {"show", "r-killed"}, {"run", "--dry-run", "--chain", "deliver-prd"}} {
				res := gonogo(t, vars, "", args...)
				if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "is "+lose) || !strings.Contains(res.stderr, "holds the files of 1 run") ||
					!strings.Contains(res.stderr, "restore gonogo.db from a backup") {
					t.Errorf("gonogo %s: exit %d\n%s%s", strings.Join(args, " "), res.code, res.stdout, res.stderr)
				}
			}
			if after := tree(t, data); !maps.Equal(after, before) {
				t.Error("a refused command changed the data directory")
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
