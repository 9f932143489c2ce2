package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/intake"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/internal/runner"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/parse"
	"github.com/gonogo/gonogo/storage"
)

// doctorLockWait is how long doctor waits for the store's lock: a gonogo
// holding it is reported, never waited out.
const doctorLockWait = 300 * time.Millisecond

// doctorReport is what gonogo doctor finds; --json prints it.
type doctorReport struct {
	// OK: nothing doctor looks at keeps a run from working (exit 0).
	OK bool `json:"ok"`
	// Problems say why no run could work, one each; empty when OK.
	Problems  []string        `json:"problems"`
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
	// and exited 0 in time (null when it was not asked): the executable
	// runs, which says nothing of its login or its service.
	Version string `json:"version"`
	Starts  *bool  `json:"starts"`
	Problem string `json:"problem,omitempty"`
	// Login is what the agent CLI says of its login, asked without a call
	// to its service; absent when the agent was not found or not asked.
	Login *doctorLogin `json:"login,omitempty"`
	// Node is the Node an agent CLI installed with npm declares and the
	// one it runs on; absent for an executable no npm package names.
	Node *doctorNode `json:"node,omitempty"`
}

type doctorLogin struct {
	Checked  bool   `json:"checked"`   // the CLI answered
	LoggedIn bool   `json:"logged_in"` // what it answered
	How      string `json:"how,omitempty"`
	Asked    string `json:"asked,omitempty"` // the command asked
	Why      string `json:"why,omitempty"`   // why it was not checked
	Hint     string `json:"hint,omitempty"`  // how to log in
}

type doctorNode struct {
	Package  string `json:"package"`
	Declares string `json:"declares"` // package.json engines.node
	Node     string `json:"node"`     // node --version of NodePath
	NodePath string `json:"node_path"`
	Older    bool   `json:"older"` // Node is older than Declares allows
	Why      string `json:"why,omitempty"`
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
	Dir    string `json:"dir"`
	Exists bool   `json:"exists"`
	// Writable: gonogo can write there, or create it (the nearest folder
	// above it that exists takes a new entry); NotWritable says why not.
	Writable    bool   `json:"writable"`
	NotWritable string `json:"not_writable,omitempty"`
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
	rep := diagnose(ctx, cfg, f)
	rep.Temporal = diagnoseTemporal(ctx, e)
	rep.judge()
	if f.json {
		if c := writeJSON(e, "doctor", rep); c != terminal.ExitOK {
			return c
		}
	} else {
		printDoctor(e.stdout, rep)
	}
	if !rep.OK {
		return terminal.ExitRefused
	}
	return terminal.ExitOK
}

// diagnose looks at everything gonogo needs, each part on its own, so one
// problem never hides another.
func diagnose(ctx context.Context, cfg config, f *runFlags) doctorReport {
	rep := doctorReport{Runner: runnerName(f)}
	rep.Runners = diagnoseRunners(ctx, f)
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
	case errors.Is(err, runner.ErrNotExecutable):
		r.Problem = "found, but not executable"
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
	if n, ok := runner.CheckNode(ctx, path, runner.VersionTimeout); ok && n.Declares != "" {
		r.Node = &doctorNode{Package: n.Package, Declares: n.Declares, Node: n.Node, NodePath: n.NodePath, Older: n.Older, Why: n.Why}
	}
	v, err := runner.Version(ctx, path, info.VersionArgs, runner.VersionTimeout)
	starts := err == nil
	r.Starts = &starts
	if err != nil {
		r.Problem = fmt.Sprintf("does not start: %s %s: %v", filepath.Base(path), strings.Join(info.VersionArgs, " "), err)
		return
	}
	r.Version = v
	l := info.CheckLogin(ctx, path, runner.VersionTimeout)
	r.Login = &doctorLogin{Checked: l.Checked, LoggedIn: l.LoggedIn, How: l.How, Asked: l.Asked, Why: l.Why, Hint: l.Hint}
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
	case err != nil:
		// Missing, or a part of its path is no folder: the first run
		// creates it, if it can.
		d.Store = "none"
		d.Writable, d.NotWritable = canCreate(dir)
		return d
	case !fi.IsDir():
		d.Exists = true
		d.Store, d.StoreError = "error", "not a directory"
		d.NotWritable = "it is a file, not a directory"
		return d
	}
	d.Exists = true
	d.Writable, d.NotWritable = canWrite(dir)
	if _, err := os.Stat(filepath.Join(dir, storage.FileName)); errors.Is(err, fs.ErrNotExist) {
		d.Store = "none"
		return d
	}
	if err := checkDataDir(dir); err != nil {
		d.Store, d.StoreError = "error", err.Error()
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

// canWrite reports whether gonogo can write in the folder dir, by writing
// there: a probe file, removed at once. Permission bits alone do not say
// it (root, a read-only mount, a full disk).
func canWrite(dir string) (bool, string) {
	tmp, err := os.CreateTemp(dir, ".gonogo-doctor-*")
	if err != nil {
		return false, localapi.RootCause(err).Error()
	}
	tmp.Close()
	os.Remove(tmp.Name())
	return true, ""
}

// canCreate reports whether the missing folder dir can be created: the
// nearest part of its path that exists must be a folder gonogo can write
// in. A path through a file (a typo in GONOGO_DATA_DIR naming a file as a
// folder) cannot be created, not even by root.
func canCreate(dir string) (bool, string) {
	p := filepath.Clean(dir)
	for {
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			return false, fmt.Sprintf("it cannot be created: %s is a file, not a directory", p)
		case err == nil:
			if ok, why := canWrite(p); !ok {
				return false, fmt.Sprintf("it cannot be created in %s: %s", p, why)
			}
			return true, ""
		}
		up := filepath.Dir(p)
		if up == p {
			return false, fmt.Sprintf("it cannot be created: %v", err)
		}
		p = up
	}
}

// judge says whether a run can start, and if not, each reason.
func (rep *doctorReport) judge() {
	p := []string{}
	for _, r := range rep.Runners {
		if r.Configured {
			p = append(p, runnerProblems(r)...)
		}
	}
	s := rep.Skills
	switch {
	case !s.Exists:
		p = append(p, "no skills folder: "+strings.Join(s.Problems, "; "))
	case s.Skills == 0 && s.Broken > 0:
		p = append(p, fmt.Sprintf("no usable skill in %s: %s found, none can be used (see gonogo skills)", strings.Join(s.Dirs, ", "), terminal.Plural(s.Broken, "skill")))
	case s.Skills == 0:
		p = append(p, fmt.Sprintf("no usable skill: %s holds none", strings.Join(s.Dirs, ", ")))
	}
	d := rep.Data
	switch {
	case !d.Writable:
		p = append(p, fmt.Sprintf("gonogo cannot write the data directory %s: %s", d.Dir, d.NotWritable))
	case d.Store == "error":
		p = append(p, fmt.Sprintf("the store in %s does not open: %s", d.Dir, d.StoreError))
	}
	if t := rep.Temporal; t != nil && t.Problem != "" {
		p = append(p, "gonogo cannot work on the Temporal cluster GONOGO_TEMPORAL_ADDR names: "+t.Problem)
	}
	rep.Problems, rep.OK = p, len(p) == 0
}

// runnerProblems are why the configured runner cannot run its agent.
func runnerProblems(r doctorRunner) []string {
	switch {
	case r.Problem != "" && r.Executable == "":
		return []string{fmt.Sprintf("the %s runner cannot run: %s", r.Name, r.Problem)}
	case r.Problem != "":
		return []string{fmt.Sprintf("the %s runner cannot run its agent %q: %s; point at it with --runner-cmd PATH (GONOGO_RUNNER_CMD) or choose another with --runner", r.Name, r.Executable, r.Problem)}
	case r.Login != nil && r.Login.Checked && !r.Login.LoggedIn:
		return []string{fmt.Sprintf("the %s runner's agent is not logged in (%s says so): %s", r.Name, r.Login.Asked, r.Login.Hint)}
	}
	return nil
}
