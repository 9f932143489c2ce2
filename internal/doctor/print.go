package doctor

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gonogo/gonogo/internal/terminal"
)

// Print writes the report for people: a line for each part doctor looks
// at, then the verdict, "OK: a run can start: ..." or "NOT OK: no run
// could work:" and each reason.
func Print(w io.Writer, rep Report) {
	printRunners(w, rep)
	printSkills(w, rep.Skills)
	printWorkflows(w, rep.Workflows)
	fmt.Fprintf(w, "Data       %s: %s\n", rep.Data.Dir, dataLine(rep.Data))
	if rep.Temporal != nil {
		fmt.Fprintf(w, "Temporal   %s\n", temporalLine(rep.Temporal))
	}
	printVerdict(w, rep)
}

// printRunners writes a line for each runner, the configured one starred,
// with its agent's login and Node under it when doctor asked.
func printRunners(w io.Writer, rep Report) {
	fmt.Fprintf(w, "Runners (configured: %s)\n", rep.Runner)
	for _, r := range rep.Runners {
		mark := " "
		if r.Configured {
			mark = "*"
		}
		fmt.Fprintf(w, "  %s %-8s %s\n", mark, r.Name, runnerLine(r))
		if l := r.Login; l != nil {
			fmt.Fprintf(w, "               login: %s\n", loginWords(l))
		}
		if n := r.Node; n != nil {
			fmt.Fprintf(w, "               node:  %s\n", nodeLine(n))
		}
	}
}

func printSkills(w io.Writer, s Skills) {
	dirs := strings.Join(s.Dirs, ", ")
	if dirs == "" {
		dirs = "no folder"
	}
	fmt.Fprintf(w, "Skills     %s (%s): ", dirs, s.Source)
	switch {
	case !s.Exists:
		fmt.Fprint(w, "not found")
	case s.Broken > 0:
		fmt.Fprintf(w, "%s (%d usable, %d that cannot be used)", terminal.Plural(s.Skills+s.Broken, "skill"), s.Skills, s.Broken)
	default:
		fmt.Fprint(w, terminal.Plural(s.Skills, "skill"))
	}
	fmt.Fprintln(w, problemCount(s.Problems))
	printProblems(w, s.Problems)
}

func printWorkflows(w io.Writer, wf Workflows) {
	fmt.Fprintf(w, "Workflows  %s: ", wf.Dir)
	if wf.Exists {
		fmt.Fprintf(w, "%d workflows%s\n", wf.Workflows, problemCount(wf.Problems))
	} else {
		fmt.Fprintln(w, "none (the folder does not exist; gonogo workflow save creates it)")
	}
	printProblems(w, wf.Problems)
}

// printVerdict writes whether a run can start: what was found that it
// needs, or each reason none could work.
func printVerdict(w io.Writer, rep Report) {
	if !rep.OK {
		fmt.Fprintln(w, "NOT OK: no run could work:")
		for _, p := range rep.Problems {
			fmt.Fprintf(w, "  - %s\n", p)
		}
		return
	}
	fmt.Fprintf(w, "OK: a run can start: %s.\n", strings.Join(okFacts(rep), "; "))
}

// okFacts are what doctor found that a run needs, each as far as it was
// checked and no further.
func okFacts(rep Report) []string {
	var facts []string
	for _, r := range rep.Runners {
		if r.Configured {
			facts = append(facts, agentFact(r))
		}
	}
	facts = append(facts, terminal.Plural(rep.Skills.Skills, "usable skill"), dataFact(rep.Data))
	if rep.Temporal != nil {
		facts = append(facts, "the Temporal cluster is ready")
	}
	return facts
}

// dataFact is what doctor knows of a data directory a run can use.
func dataFact(d Data) string {
	switch {
	case d.Store == "held":
		return "the data directory is writable, its store held by another gonogo now"
	case d.Exists:
		return "the data directory is writable"
	}
	return "the data directory can be created"
}

// agentFact is what doctor knows of the configured runner's agent.
func agentFact(r Runner) string {
	switch {
	case r.Executable == "":
		return fmt.Sprintf("the %s runner needs no agent", r.Name)
	case r.Starts == nil:
		return fmt.Sprintf("the %s runner's agent %s is there (not run: it may take any argument as work)", r.Name, r.Path)
	}
	fact := fmt.Sprintf("the %s runner's agent answers --version", r.Name)
	switch l := r.Login; {
	case l == nil:
	case l.Checked:
		fact += fmt.Sprintf(" and %s says it is logged in%s", l.Asked, how(l.How))
	default:
		fact += "; its login was not checked: " + l.Why
	}
	return fact
}

func how(h string) string {
	if h == "" {
		return ""
	}
	return " (" + h + ")"
}

// nodeLine says what Node an agent CLI declares and runs on.
func nodeLine(n *Node) string {
	declares := fmt.Sprintf("%s declares node %s", n.Package, n.Declares)
	switch {
	case n.Why != "":
		return fmt.Sprintf("%s; not compared: %s", declares, n.Why)
	case n.Older:
		return fmt.Sprintf("%s, but %s is %s: OLDER than it supports; install a newer Node", declares, n.NodePath, n.Node)
	}
	return fmt.Sprintf("%s; %s is %s", declares, n.NodePath, n.Node)
}

func runnerLine(r Runner) string {
	switch {
	case r.Executable == "" && r.Problem == "":
		return "runs nothing"
	case !r.Found && r.Problem != "" && r.Executable == "":
		return r.Problem
	case !r.Found:
		return fmt.Sprintf("%q %s", r.Executable, r.Problem)
	}
	return strings.Join(append([]string{r.Path}, versionWords(r)...), "  ")
}

// versionWords say what a found agent answered to --version.
func versionWords(r Runner) []string {
	switch {
	case r.Starts == nil:
		return []string{"(version not asked: any executable)"}
	case *r.Starts:
		return []string{r.Version, "answers --version"}
	}
	return []string{r.Problem}
}

func loginWords(l *Login) string {
	switch {
	case !l.Checked:
		return "not checked: " + l.Why
	case l.LoggedIn:
		return fmt.Sprintf("%s: logged in%s", l.Asked, how(l.How))
	}
	return fmt.Sprintf("%s: NOT logged in (%s)", l.Asked, l.Hint)
}

func dataLine(d Data) string {
	switch {
	case !d.Exists && !d.Writable:
		return "does not exist, and " + d.NotWritable
	case !d.Exists:
		return "does not exist yet (created by the first run)"
	}
	parts := []string{"exists"}
	if d.Writable {
		parts = append(parts, "writable")
	} else {
		parts = append(parts, "NOT writable: "+d.NotWritable)
	}
	if store := storeWords(d); store != "" {
		parts = append(parts, store)
	}
	return strings.Join(parts, ", ")
}

// storeWords says what doctor found of the store in an existing data
// directory, or "" for a Store value it does not name.
func storeWords(d Data) string {
	switch d.Store {
	case "none":
		return "no store yet"
	case "held":
		return "store held by another gonogo (a serve or run using this directory)"
	case "error":
		return "store does not open: " + d.StoreError
	case "ok":
		return "store opens: " + runsWords(d.Runs)
	}
	return ""
}

// runsWords counts the runs in the store, then by state in name order.
func runsWords(byState map[string]int) string {
	total := 0
	var states []string
	for st, n := range byState {
		total += n
		states = append(states, fmt.Sprintf("%d %s", n, st))
	}
	sort.Strings(states)
	runs := terminal.Plural(total, "run")
	if len(states) > 0 {
		runs += " (" + strings.Join(states, ", ") + ")"
	}
	return runs
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

func temporalLine(t *Temporal) string {
	switch {
	case t.Problem != "" && t.Addr == "":
		return "PROBLEM: " + t.Problem
	case t.Problem != "":
		return fmt.Sprintf("%s, namespace %s: PROBLEM: %s", t.Addr, t.Namespace, t.Problem)
	case t.Workers == 0:
		return fmt.Sprintf("%s, namespace %s: ready; no gonogo worker takes steps now (runs wait until one starts: gonogo worker); %s", t.Addr, t.Namespace, t.heartbeatWords())
	}
	verb := "takes"
	if t.Workers > 1 {
		verb = "take"
	}
	return fmt.Sprintf("%s, namespace %s: ready; %s %s steps; %s", t.Addr, t.Namespace, terminal.Plural(t.Workers, "worker"), verb, t.heartbeatWords())
}

func (t *Temporal) heartbeatWords() string {
	return "runs started here take a step worker silent " + t.Heartbeat + " for lost (GONOGO_TEMPORAL_HEARTBEAT)"
}
