package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/intake"
	"github.com/gonogo/gonogo/engine/runner"
	"github.com/gonogo/gonogo/parse"
	"github.com/gonogo/gonogo/storage"
)

// doctorLockWait is how long doctor waits for the store's lock: a gonogo
// holding it is reported, never waited out.
const doctorLockWait = 300 * time.Millisecond

// doctorReport is what gonogo doctor finds; --json prints it.
type doctorReport struct {
	// OK: the configured runner can run its agent (exit 0).
	OK        bool            `json:"ok"`
	Runner    string          `json:"runner"` // the configured runner
	Runners   []doctorRunner  `json:"runners"`
	Skills    doctorSkills    `json:"skills"`
	Workflows doctorWorkflows `json:"workflows"`
	Data      doctorData      `json:"data"`
	// Temporal is the cluster GONOGO_TEMPORAL_ADDR names; absent when unset.
	Temporal *doctorTemporal `json:"temporal,omitempty"`
}

type doctorRunner struct {
	Name       string `json:"name"`
	Configured bool   `json:"configured"`
	// Executable is what the runner runs ("" for dry-run, or for command
	// when none is given); Path where it was found, "" when it was not.
	Executable string `json:"executable"`
	Path       string `json:"path"`
	Found      bool   `json:"found"`
	// Version is the first line of its --version; Starts whether that ran
	// and exited 0 in time (null when it was not asked).
	Version string `json:"version"`
	Starts  *bool  `json:"starts"`
	Problem string `json:"problem,omitempty"`
}

type doctorSkills struct {
	Dirs     []string `json:"dirs"`   // the folders read, first wins a name
	Source   string   `json:"source"` // why these folders
	Exists   bool     `json:"exists"`
	Skills   int      `json:"skills"` // skills that load and can be used
	Broken   int      `json:"broken"` // skills found that cannot be used
	Problems []string `json:"problems"`
}

type doctorWorkflows struct {
	Dir       string   `json:"dir"`
	Exists    bool     `json:"exists"`
	Workflows int      `json:"workflows"`
	Problems  []string `json:"problems"`
}

type doctorData struct {
	Dir      string `json:"dir"`
	Exists   bool   `json:"exists"`
	Writable bool   `json:"writable"`
	// Store is "ok", "none" (no database yet), "held" (another gonogo has
	// it open) or "error".
	Store      string         `json:"store"`
	StoreError string         `json:"store_error,omitempty"`
	Runs       map[string]int `json:"runs"` // by state
}

func newDoctorCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:   "doctor [flags]",
		Short: "Check the agents, the skills and workflows folders and the data directory",
		Long: `Check what gonogo needs before any work starts: for every runner, its agent
executable (found on PATH or not), its version (--version, asked with a short
timeout) and whether it starts; the skills folder in use and how many skills
load, with their problems; the workflows folder; and the data directory
(exists, writable, whether its store opens or another gonogo holds it, runs by
state). Nothing is created.

With GONOGO_TEMPORAL_ADDR set it also asks the Temporal cluster: reachable, the
namespace and gonogo's search attributes there (gonogo temporal setup), and how many
gonogo workers take steps now.

Exit codes: 0 the configured runner can run its agent (and the cluster, when one is
named, is ready), 1 it cannot, 2 usage error.`,
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
	rep := diagnose(ctx, cfg, f)
	if rep.Temporal = diagnoseTemporal(ctx, e); rep.Temporal != nil && rep.Temporal.Problem != "" {
		rep.OK = false
	}
	if f.json {
		if c := writeJSON(e, "doctor", rep); c != exitOK {
			return c
		}
	} else {
		printDoctor(e.stdout, rep)
	}
	if !rep.OK {
		return exitRefused
	}
	return exitOK
}

// diagnose looks at everything gonogo needs, each part on its own, so one
// problem never hides another.
func diagnose(ctx context.Context, cfg config, f *runFlags) doctorReport {
	rep := doctorReport{Runner: runnerName(f)}
	rep.Runners = diagnoseRunners(ctx, f)
	for _, r := range rep.Runners {
		if r.Configured {
			rep.OK = r.Problem == ""
		}
	}
	rep.Skills = diagnoseSkills(cfg, f.skills)
	rep.Workflows = diagnoseWorkflows(cfg.WorkflowsDir)
	rep.Data = diagnoseData(ctx, f.data)
	return rep
}

// diagnoseRunners finds every known runner's executable and asks it its
// version, all at once, so the whole takes at most one timeout.
func diagnoseRunners(ctx context.Context, f *runFlags) []doctorRunner {
	configured := runnerName(f)
	infos := runner.Infos()
	out := make([]doctorRunner, len(infos))
	var wg sync.WaitGroup
	for i, info := range infos {
		cmd := ""
		if info.Name == configured {
			cmd = f.runnerCmd
		}
		out[i] = doctorRunner{Name: info.Name, Configured: info.Name == configured, Executable: info.Executable(cmd)}
		wg.Go(func() { checkRunner(ctx, info, cmd, &out[i]) })
	}
	wg.Wait()
	if _, ok := runner.Lookup(configured); !ok {
		out = append(out, doctorRunner{Name: configured, Configured: true,
			Problem: fmt.Sprintf("unknown runner (valid: %s)", strings.Join(runner.Names(), ", "))})
	}
	return out
}

func checkRunner(ctx context.Context, info runner.Info, cmd string, r *doctorRunner) {
	if !info.RunsAgent {
		return
	}
	path, err := info.Find(cmd)
	switch {
	case errors.Is(err, runner.ErrNoExecutable):
		r.Problem = "no executable given (--runner-cmd PATH or GONOGO_RUNNER_CMD)"
		return
	case err != nil:
		r.Problem = "not found"
		if !strings.ContainsRune(r.Executable, filepath.Separator) {
			r.Problem += " on PATH"
		}
		return
	}
	r.Path, r.Found = path, true
	if info.VersionArgs == nil {
		return
	}
	v, err := runner.Version(ctx, path, info.VersionArgs, runner.VersionTimeout)
	starts := err == nil
	r.Starts = &starts
	if err != nil {
		r.Problem = fmt.Sprintf("does not start: %s %s: %v", filepath.Base(path), strings.Join(info.VersionArgs, " "), err)
		return
	}
	r.Version = v
}

// skillsSource says why the skills folders are the ones used.
func skillsSource(cfg config, explicit string, src skillSources) string {
	switch {
	case explicit != "" && explicit == cfg.SkillsDir:
		return "GONOGO_SKILLS_DIR"
	case explicit != "":
		return "--skills"
	case len(src.dirs) == 1 && src.dirs[0] == "skills":
		return "skills in the working directory (no Claude Code skills folder found)"
	}
	return "Claude Code's skills folders (~/.claude/skills, then .claude/skills)"
}

func diagnoseSkills(cfg config, explicit string) doctorSkills {
	src := cfg.skillSources(explicit)
	s := doctorSkills{Dirs: src.dirs, Source: skillsSource(cfg, explicit, src), Problems: []string{}}
	if s.Dirs == nil {
		s.Dirs = []string{}
	}
	cat, err := cfg.loadSkills(explicit)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.Problems = append(s.Problems, err.Error())
		return s
	case err != nil:
		s.Exists = true
		s.Problems = append(s.Problems, err.Error())
		return s
	}
	s.Exists = true
	pol, err := parse.LoadPolicy(cfg.Policy)
	if err != nil {
		s.Problems = append(s.Problems, fmt.Sprintf("policy: %v", err))
		return s
	}
	// The counts and problems are gonogo skills' own: a skill that
	// cannot run as a step (broken, its leaf agent missing, refused by
	// the policy) is not usable.
	warned := map[string]bool{}
	for _, w := range cat.Warnings() {
		warned[w] = true
		s.Problems = append(s.Problems, w)
	}
	for _, sk := range skillList(cat, pol) {
		switch {
		case sk.Usable:
			s.Skills++
		case !warned[*sk.Problem]:
			s.Broken++
			s.Problems = append(s.Problems, sk.Dir+": "+*sk.Problem)
		default:
			s.Broken++
		}
	}
	return s
}

func diagnoseWorkflows(dir string) doctorWorkflows {
	w := doctorWorkflows{Dir: dir, Problems: []string{}}
	names, err := intake.Dir(dir).List()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return w // optional: no problem
	case err != nil:
		w.Exists = true
		w.Problems = append(w.Problems, err.Error())
		return w
	}
	w.Exists, w.Workflows = true, len(names)
	for _, n := range names {
		if _, err := intake.Dir(dir).Workflow(n); err != nil {
			w.Problems = append(w.Problems, err.Error())
		}
	}
	return w
}

// diagnoseData looks at the data directory without creating anything in
// it: a missing directory or database is reported, not made.
func diagnoseData(ctx context.Context, dir string) doctorData {
	d := doctorData{Dir: dir, Runs: map[string]int{}}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.Store = "none"
		return d
	case err != nil:
		d.Store, d.StoreError = "error", err.Error()
		return d
	case !fi.IsDir():
		d.Exists = true
		d.Store, d.StoreError = "error", "not a directory"
		return d
	}
	d.Exists = true
	if tmp, err := os.CreateTemp(dir, ".doctor-*"); err == nil {
		d.Writable = true
		tmp.Close()
		os.Remove(tmp.Name())
	}
	if _, err := os.Stat(filepath.Join(dir, storage.FileName)); errors.Is(err, fs.ErrNotExist) {
		d.Store = "none"
		return d
	}
	db, err := storage.Open(dir, storage.Options{LockTimeout: doctorLockWait})
	switch {
	case errors.Is(err, engine.ErrLocked):
		d.Store = "held"
		return d
	case err != nil:
		d.Store, d.StoreError = "error", err.Error()
		return d
	}
	defer db.Close()
	reapAgents(dir, slog.Default())
	list, err := db.List(ctx)
	if err != nil {
		d.Store, d.StoreError = "error", err.Error()
		return d
	}
	d.Store = "ok"
	for _, s := range list {
		d.Runs[string(s.State)]++
	}
	return d
}

func printDoctor(w io.Writer, rep doctorReport) {
	fmt.Fprintf(w, "Runners (configured: %s)\n", rep.Runner)
	for _, r := range rep.Runners {
		mark := " "
		if r.Configured {
			mark = "*"
		}
		fmt.Fprintf(w, "  %s %-8s %s\n", mark, r.Name, runnerLine(r))
	}
	s := rep.Skills
	dirs := strings.Join(s.Dirs, ", ")
	if dirs == "" {
		dirs = "no folder"
	}
	fmt.Fprintf(w, "Skills     %s (%s): ", dirs, s.Source)
	switch {
	case !s.Exists:
		fmt.Fprint(w, "not found")
	case s.Broken > 0:
		fmt.Fprintf(w, "%s (%d usable, %d that cannot be used)", plural(s.Skills+s.Broken, "skill"), s.Skills, s.Broken)
	default:
		fmt.Fprint(w, plural(s.Skills, "skill"))
	}
	fmt.Fprintln(w, problemCount(s.Problems))
	printProblems(w, s.Problems)
	wf := rep.Workflows
	fmt.Fprintf(w, "Workflows  %s: ", wf.Dir)
	if wf.Exists {
		fmt.Fprintf(w, "%d workflows%s\n", wf.Workflows, problemCount(wf.Problems))
	} else {
		fmt.Fprintln(w, "none (the folder does not exist; gonogo workflow save creates it)")
	}
	printProblems(w, wf.Problems)
	fmt.Fprintf(w, "Data       %s: %s\n", rep.Data.Dir, dataLine(rep.Data))
	if rep.Temporal != nil {
		fmt.Fprintf(w, "Temporal   %s\n", temporalLine(rep.Temporal))
	}
	switch {
	case rep.Temporal != nil && rep.Temporal.Problem != "":
		fmt.Fprintln(w, "NOT OK: gonogo cannot work on the Temporal cluster GONOGO_TEMPORAL_ADDR names; see the Temporal line.")
	case rep.OK:
		fmt.Fprintf(w, "OK: the %s runner can run its agent.\n", rep.Runner)
	default:
		fmt.Fprintf(w, "NOT OK: the %s runner cannot run its agent; point at it with --runner-cmd PATH (GONOGO_RUNNER_CMD) or choose another with --runner.\n", rep.Runner)
	}
}

func runnerLine(r doctorRunner) string {
	switch {
	case r.Executable == "" && r.Problem == "":
		return "runs nothing"
	case !r.Found && r.Problem != "" && r.Executable == "":
		return r.Problem
	case !r.Found:
		return fmt.Sprintf("%q %s", r.Executable, r.Problem)
	}
	parts := []string{r.Path}
	switch {
	case r.Starts == nil:
		parts = append(parts, "(version not asked: any executable)")
	case *r.Starts:
		parts = append(parts, r.Version, "starts")
	default:
		parts = append(parts, r.Problem)
	}
	return strings.Join(parts, "  ")
}

func dataLine(d doctorData) string {
	if !d.Exists {
		if d.StoreError != "" {
			return d.StoreError
		}
		return "does not exist yet (created by the first run)"
	}
	parts := []string{"exists"}
	if d.Writable {
		parts = append(parts, "writable")
	} else {
		parts = append(parts, "NOT writable")
	}
	switch d.Store {
	case "none":
		parts = append(parts, "no store yet")
	case "held":
		parts = append(parts, "store held by another gonogo (a serve or run using this directory)")
	case "error":
		parts = append(parts, "store does not open: "+d.StoreError)
	case "ok":
		total := 0
		var states []string
		for st, n := range d.Runs {
			total += n
			states = append(states, fmt.Sprintf("%d %s", n, st))
		}
		sort.Strings(states)
		runs := "store opens: " + plural(total, "run")
		if len(states) > 0 {
			runs += " (" + strings.Join(states, ", ") + ")"
		}
		parts = append(parts, runs)
	}
	return strings.Join(parts, ", ")
}

func problemCount(p []string) string {
	switch len(p) {
	case 0:
		return ""
	case 1:
		return ", 1 problem"
	}
	return fmt.Sprintf(", %d problems", len(p))
}

func printProblems(w io.Writer, p []string) {
	for _, s := range p {
		fmt.Fprintf(w, "    ! %s\n", s)
	}
}
