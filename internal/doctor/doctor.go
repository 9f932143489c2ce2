package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/intake"
	"github.com/gonogo/gonogo/internal/runner"
	"github.com/gonogo/gonogo/parse"
)

// Config is the set-up doctor checks, as the command line and the
// environment name it. What reads a flag or a variable stays with the
// command; doctor only looks.
type Config struct {
	// Runner is the configured runner ("dry-run" for --dry-run);
	// RunnerCmd the executable given for it (--runner-cmd), if any.
	Runner    string
	RunnerCmd string
	Skills    SkillsConfig
	// WorkflowsDir is GONOGO_WORKFLOWS_DIR: optional, so a missing one is
	// no problem.
	WorkflowsDir string
	DataDir      string
	// CheckDataDir refuses a data directory other users may write, as
	// every command that opens the store does; nil checks nothing.
	CheckDataDir func(dir string) error
	// ReapAgents stops the agents a gonogo that died left running on the
	// data directory; doctor calls it holding the store's lock, as every
	// open of the store does. Nil stops nothing.
	ReapAgents func(dir string)
	// Temporal is the cluster GONOGO_TEMPORAL_ADDR names; nil when unset.
	Temporal *TemporalConfig
}

// SkillsConfig is where the skills come from.
type SkillsConfig struct {
	// Dirs are the skills folders read, first wins a name.
	Dirs []string
	// Given names who gave the one folder: "--skills" or
	// "GONOGO_SKILLS_DIR"; "" when gonogo looked for Claude Code's.
	Given string
	// Load reads the skills; an error wrapping fs.ErrNotExist says no
	// skills folder exists.
	Load func() (*parse.Catalog, error)
	// Policy is GONOGO_POLICY, the policy file ("" for the built-in one).
	Policy string
}

// Check looks at everything gonogo needs, each part on its own so that
// one problem never hides another, and judges whether a run can start.
// It creates nothing: a probe file shows a folder writable and is
// removed at once.
func Check(ctx context.Context, cfg Config) Report {
	rep := Report{Runner: cfg.Runner}
	rep.Runners = checkRunners(ctx, cfg.Runner, cfg.RunnerCmd)
	rep.Skills = checkSkills(cfg.Skills)
	rep.Workflows = checkWorkflows(cfg.WorkflowsDir)
	rep.Data = checkData(ctx, cfg)
	rep.Temporal = checkTemporal(ctx, cfg.Temporal)
	rep.judge()
	return rep
}

// checkRunners finds every known runner's executable and asks it its
// version, all at once, so the whole takes at most one timeout.
func checkRunners(ctx context.Context, configured, runnerCmd string) []Runner {
	infos := runner.Infos()
	out := make([]Runner, len(infos))
	var wg sync.WaitGroup
	for i, info := range infos {
		cmd := ""
		if info.Name == configured {
			cmd = runnerCmd
		}
		out[i] = Runner{Name: info.Name, Configured: info.Name == configured, Executable: info.Executable(cmd)}
		wg.Go(func() { checkRunner(ctx, info, cmd, &out[i]) })
	}
	wg.Wait()
	if _, ok := runner.Lookup(configured); !ok {
		out = append(out, Runner{Name: configured, Configured: true,
			Problem: fmt.Sprintf("unknown runner (valid: %s)", strings.Join(runner.Names(), ", "))})
	}
	return out
}

func checkRunner(ctx context.Context, info runner.Info, cmd string, r *Runner) {
	if !info.RunsAgent {
		return
	}
	path, err := info.Find(cmd)
	if err != nil {
		r.Problem = findProblem(err, r.Executable)
		return
	}
	r.Path, r.Found = path, true
	if info.VersionArgs != nil {
		askAgent(ctx, info, path, r)
	}
}

// askAgent asks the agent found at path what doctor reports of it: the
// Node it runs on, its version and, once it starts, its login.
func askAgent(ctx context.Context, info runner.Info, path string, r *Runner) {
	if n, ok := runner.CheckNode(ctx, path, runner.VersionTimeout); ok && n.Declares != "" {
		r.Node = &Node{Package: n.Package, Declares: n.Declares, Node: n.Node, NodePath: n.NodePath, Older: n.Older, Why: n.Why}
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
	r.Login = &Login{Checked: l.Checked, LoggedIn: l.LoggedIn, How: l.How, Asked: l.Asked, Why: l.Why, Hint: l.Hint}
}

// findProblem says why the runner's executable was not found, as the
// runner's line shows it.
func findProblem(err error, executable string) string {
	switch {
	case errors.Is(err, runner.ErrNoExecutable):
		return "no executable given (--runner-cmd PATH or GONOGO_RUNNER_CMD)"
	case errors.Is(err, runner.ErrNotExecutable):
		return "found, but not executable"
	case strings.ContainsRune(executable, filepath.Separator):
		return "not found"
	}
	return "not found on PATH"
}

// skillsSource says why the skills folders are the ones used.
func skillsSource(given string, dirs []string) string {
	switch {
	case given != "":
		return given
	case len(dirs) == 1 && dirs[0] == "skills":
		return "skills in the working directory (no Claude Code skills folder found)"
	case len(dirs) == 0:
		return "the default folders: ~/.claude/skills, .claude/skills, then skills in the working directory"
	}
	return "Claude Code's skills folders (~/.claude/skills, then .claude/skills)"
}

func checkSkills(cfg SkillsConfig) Skills {
	s := Skills{Dirs: cfg.Dirs, Source: skillsSource(cfg.Given, cfg.Dirs), Problems: []string{}}
	if s.Dirs == nil {
		s.Dirs = []string{}
	}
	cat, err := cfg.Load()
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
	countSkills(&s, cat, pol)
	return s
}

// countSkills counts the usable and broken skills of cat into s, with the
// catalog's warnings and each broken skill's problem. The counts and
// problems are gonogo skills' own: a skill that cannot run as a step
// (broken, its leaf agent missing, refused by the policy) is not usable.
func countSkills(s *Skills, cat *parse.Catalog, pol engine.Policy) {
	warned := map[string]bool{}
	for _, w := range cat.Warnings() {
		warned[w] = true
		s.Problems = append(s.Problems, w)
	}
	for _, sk := range cat.Skills() {
		problem := skillProblem(sk, cat, pol)
		switch {
		case problem == "":
			s.Skills++
		case !warned[problem]:
			s.Broken++
			s.Problems = append(s.Problems, sk.Dir+": "+problem)
		default:
			s.Broken++
		}
	}
}

// skillProblem is why a skill cannot be used, as gonogo skills says it:
// the catalog's own words for a broken skill (they name its file and
// line), else the engine's.
func skillProblem(s engine.Skill, cat *parse.Catalog, pol engine.Policy) string {
	if s.Problem != "" {
		return s.Problem
	}
	return engine.Unusable(s.Name, cat, pol)
}

func checkWorkflows(dir string) Workflows {
	w := Workflows{Dir: dir, Problems: []string{}}
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
