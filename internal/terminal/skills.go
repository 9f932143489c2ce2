package terminal

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gonogo/gonogo/engine"
)

// SkillCatalog is what gonogo skills lists of the installed skills.
type SkillCatalog interface {
	engine.Catalog
	// Skills is every installed skill, usable or not, in name order.
	Skills() []engine.Skill
	// AgentFile is the file a leaf agent is read from.
	AgentFile(name string) (string, error)
}

// SkillJSON is one entry of gonogo skills --json. The keys are part of
// gonogo's JSON contract (see the README).
type SkillJSON struct {
	Name           string  `json:"name"`
	Category       string  `json:"category"`
	Description    string  `json:"description"`
	LeafAgent      *string `json:"leaf_agent"`
	LeafAgentFound *bool   `json:"leaf_agent_found"`
	LeafAgentFile  *string `json:"leaf_agent_file"`
	HasTemplate    bool    `json:"has_template"`
	HasExample     bool    `json:"has_example"`
	Source         string  `json:"source"`
	Dir            string  `json:"dir"`
	Usable         bool    `json:"usable"`
	Problem        *string `json:"problem"`
}

// SkillList describes every skill in the catalog, in name order, as
// gonogo skills --json gives it.
func SkillList(cat SkillCatalog, pol engine.Policy) []SkillJSON {
	list := []SkillJSON{}
	for _, s := range cat.Skills() {
		class, leaf, _ := pol.Classify(s.Name)
		js := SkillJSON{Name: s.Name, Category: skillCategory(class), Description: s.Description,
			HasTemplate: s.HasTemplate, HasExample: s.HasExample, Source: s.Source, Dir: s.Dir}
		if class == engine.ClassDispatch {
			js.LeafAgent, js.LeafAgentFound, js.LeafAgentFile = leafAgentJSON(cat, leaf)
		}
		problem := skillProblem(s, cat, pol)
		js.Usable, js.Problem = problem == "", strOrNil(problem)
		list = append(list, js)
	}
	return list
}

// leafAgentJSON is the leaf agent a dispatch skill runs, whether the
// catalog has it, and its file when known.
func leafAgentJSON(cat SkillCatalog, leaf string) (name *string, found *bool, file *string) {
	f, err := cat.AgentFile(leaf)
	ok := err == nil
	if ok {
		file = strOrNil(f)
	}
	return &leaf, &ok, file
}

// skillProblem is why skill s cannot be used, or "" when it can. The
// catalog's own words for a broken skill name its file and line; the rest
// (the policy, a missing leaf) is the engine's.
func skillProblem(s engine.Skill, cat SkillCatalog, pol engine.Policy) string {
	if s.Problem != "" {
		return s.Problem
	}
	return engine.Unusable(s.Name, cat, pol)
}

// skillCategory names a policy class as gonogo skills shows it.
func skillCategory(c engine.SkillClass) string {
	if name, ok := categoryName[c]; ok {
		return name
	}
	return "content"
}

var categoryName = map[engine.SkillClass]string{
	engine.ClassDispatch: "dispatch", engine.ClassComposite: "workflow",
	engine.ClassRefused: "refused", engine.ClassSelf: "refused",
}

// PrintSkills writes the skills of list, read from the folders dirs, as a
// table for people, each problem under its skill's row.
func PrintSkills(w io.Writer, dirs []string, list []SkillJSON) {
	usable := 0
	for _, s := range list {
		if s.Usable {
			usable++
		}
	}
	fmt.Fprintf(w, "%s (%d usable) from %s\n\n", Plural(len(list), "skill"), usable, strings.Join(dirs, ", "))
	if len(list) == 0 {
		return
	}
	// The table is aligned on its own; each problem is then printed under
	// its skill's row, where tabwriter would break the columns.
	lines := skillRows(list)
	fmt.Fprint(w, lines[0])
	for i, s := range list {
		fmt.Fprint(w, lines[i+1])
		if s.Problem != nil {
			fmt.Fprintf(w, "  ! cannot be used: %s\n", *s.Problem)
		}
	}
}

// skillRows is the skills table, aligned: its heading, then a row per
// skill of list.
func skillRows(list []SkillJSON) []string {
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SKILL\tCATEGORY\tLEAF AGENT\tTEMPLATE\tEXAMPLE\tFROM")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Category, leafColumn(s), yesNo(s.HasTemplate), yesNo(s.HasExample), s.Source)
	}
	_ = tw.Flush()
	return strings.SplitAfter(table.String(), "\n")
}

// leafColumn is a skill's leaf agent in the table, marked when missing.
func leafColumn(s SkillJSON) string {
	if s.LeafAgent == nil {
		return "-"
	}
	if !*s.LeafAgentFound {
		return *s.LeafAgent + " (missing)"
	}
	return *s.LeafAgent
}

// PrintSkillWarnings writes the catalog's warnings that the list does not
// show as a skill's problem (a value read leniently, a shadowed skill, a
// missing description).
func PrintSkillWarnings(w io.Writer, warnings []string, list []SkillJSON) {
	for _, warn := range warnings {
		if !slices.ContainsFunc(list, func(s SkillJSON) bool { return s.Problem != nil && *s.Problem == warn }) {
			fmt.Fprintln(w, "warning:", warn)
		}
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
