package doctor

import (
	"fmt"
	"strings"

	"github.com/gonogo/gonogo/internal/terminal"
)

// Report is what gonogo doctor finds; doctor --json prints it as it is,
// so its field names and JSON tags are a contract.
type Report struct {
	// OK: nothing doctor looks at keeps a run from working (exit 0).
	OK bool `json:"ok"`
	// Problems say why no run could work, one each; empty when OK.
	Problems  []string  `json:"problems"`
	Runner    string    `json:"runner"` // the configured runner
	Runners   []Runner  `json:"runners"`
	Skills    Skills    `json:"skills"`
	Workflows Workflows `json:"workflows"`
	Data      Data      `json:"data"`
	// Temporal is the cluster GONOGO_TEMPORAL_ADDR names; absent when unset.
	Temporal *Temporal `json:"temporal,omitempty"`
}

// Runner is what doctor finds of one runner and its agent.
type Runner struct {
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
	Login *Login `json:"login,omitempty"`
	// Node is the Node an agent CLI installed with npm declares and the
	// one it runs on; absent for an executable no npm package names.
	Node *Node `json:"node,omitempty"`
}

// Login is what an agent CLI says of its login.
type Login struct {
	Checked  bool   `json:"checked"`   // the CLI answered
	LoggedIn bool   `json:"logged_in"` // what it answered
	How      string `json:"how,omitempty"`
	Asked    string `json:"asked,omitempty"` // the command asked
	Why      string `json:"why,omitempty"`   // why it was not checked
	Hint     string `json:"hint,omitempty"`  // how to log in
}

// Node is the Node an agent CLI's npm package declares, and the one found.
type Node struct {
	Package  string `json:"package"`
	Declares string `json:"declares"` // package.json engines.node
	Node     string `json:"node"`     // node --version of NodePath
	NodePath string `json:"node_path"`
	Older    bool   `json:"older"` // Node is older than Declares allows
	Why      string `json:"why,omitempty"`
}

// Skills is what doctor finds in the skills folders.
type Skills struct {
	Dirs     []string `json:"dirs"`   // the folders read, first wins a name
	Source   string   `json:"source"` // why these folders
	Exists   bool     `json:"exists"`
	Skills   int      `json:"skills"` // skills that load and can be used
	Broken   int      `json:"broken"` // skills found that cannot be used
	Problems []string `json:"problems"`
}

// Workflows is what doctor finds in the workflows folder.
type Workflows struct {
	Dir       string   `json:"dir"`
	Exists    bool     `json:"exists"`
	Workflows int      `json:"workflows"`
	Problems  []string `json:"problems"`
}

// Data is what doctor finds of the data directory.
type Data struct {
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

// judge says whether a run can start, and if not, each reason.
func (rep *Report) judge() {
	p := []string{}
	for _, r := range rep.Runners {
		if r.Configured {
			p = append(p, runnerProblems(r)...)
		}
	}
	if s := skillsProblem(rep.Skills); s != "" {
		p = append(p, s)
	}
	if d := dataProblem(rep.Data); d != "" {
		p = append(p, d)
	}
	if t := rep.Temporal; t != nil && t.Problem != "" {
		p = append(p, "gonogo cannot work on the Temporal cluster GONOGO_TEMPORAL_ADDR names: "+t.Problem)
	}
	rep.Problems, rep.OK = p, len(p) == 0
}

// skillsProblem says why no skill could run, or is "" when one can.
func skillsProblem(s Skills) string {
	switch {
	case !s.Exists:
		return "no skills folder: " + strings.Join(s.Problems, "; ")
	case s.Skills == 0 && s.Broken > 0:
		return fmt.Sprintf("no usable skill in %s: %s found, none can be used (see gonogo skills)", strings.Join(s.Dirs, ", "), terminal.Plural(s.Broken, "skill"))
	case s.Skills == 0:
		return fmt.Sprintf("no usable skill: %s holds none", strings.Join(s.Dirs, ", "))
	}
	return ""
}

// dataProblem says why no run could be stored, or is "" when one can.
func dataProblem(d Data) string {
	switch {
	case !d.Writable:
		return fmt.Sprintf("gonogo cannot write the data directory %s: %s", d.Dir, d.NotWritable)
	case d.Store == "error":
		return fmt.Sprintf("the store in %s does not open: %s", d.Dir, d.StoreError)
	}
	return ""
}

// runnerProblems are why the configured runner cannot run its agent.
func runnerProblems(r Runner) []string {
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
