package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/parse"
)

func newSkillsCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:   "skills [flags]",
		Short: "List the installed skills, their kind and problems",
		Long: `List the installed skills: name, category (content, dispatch, workflow,
refused), the leaf agent of a dispatch skill and whether it is found,
whether references/TEMPLATE.md and references/EXAMPLE.md exist, the skills
folder each came from, and why a skill cannot be used as a step: broken, its
leaf agent missing, or refused by the policy (GONOGO_POLICY), with its reason.

Skills are read from --skills or GONOGO_SKILLS_DIR (that folder only), else
from ~/.claude/skills and .claude/skills together (a personal skill wins
over a project skill of the same name, as in Claude Code), else from
./skills. Leaf agents are read from agents/ beside that folder,
.claude/agents and ~/.claude/agents.

Exit codes: 0 listed (problems included), 2 no skills folder found, or a
usage or configuration error.`,
		RunE:              a.action(f, cmdSkills),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	a.addJSONFlag(c, f)
	a.addSkillsFlag(c, f)
	return c
}

// jsonSkill is one entry of gonogo skills --json. The keys are part of
// gonogo's JSON contract (see the README).
type jsonSkill struct {
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

func cmdSkills(_ context.Context, e env, cfg config, f *runFlags) int {
	if len(f.positional) > 0 {
		return fail(e, "skills", usagef("skills takes no arguments (got %q)", f.positional[0]))
	}
	pol, err := parse.LoadPolicy(cfg.Policy)
	if err != nil {
		return fail(e, "skills", fmt.Errorf("policy: %w", err))
	}
	cat, err := cfg.loadSkills(f.skills)
	if err != nil {
		return fail(e, "skills", err)
	}
	list := skillList(cat, pol)
	if f.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(list); err != nil {
			return fail(e, "skills", err)
		}
	} else {
		printSkills(e.stdout, cat, list)
	}
	// What the table does not show (a value read leniently, a shadowed
	// skill, a missing description) goes to stderr.
	for _, w := range cat.Warnings() {
		if !slices.ContainsFunc(list, func(s jsonSkill) bool { return s.Problem != nil && *s.Problem == w }) {
			fmt.Fprintln(e.stderr, "warning:", w)
		}
	}
	return terminal.ExitOK
}

// skillList describes every skill in the catalog, in name order.
func skillList(cat *parse.Catalog, pol engine.Policy) []jsonSkill {
	list := []jsonSkill{}
	for _, s := range cat.Skills() {
		class, leaf, _ := pol.Classify(s.Name)
		js := jsonSkill{Name: s.Name, Category: skillCategory(class), Description: s.Description,
			HasTemplate: s.HasTemplate, HasExample: s.HasExample, Source: s.Source, Dir: s.Dir}
		if class == engine.ClassDispatch {
			file, err := cat.AgentFile(leaf)
			found := err == nil
			js.LeafAgent, js.LeafAgentFound = &leaf, &found
			if found && file != "" {
				js.LeafAgentFile = &file
			}
		}
		// The catalog's own words for a broken skill name its file and
		// line; the rest (the policy, a missing leaf) is the engine's.
		problem := s.Problem
		if problem == "" {
			problem = engine.Unusable(s.Name, cat, pol)
		}
		js.Usable = problem == ""
		if problem != "" {
			js.Problem = &problem
		}
		list = append(list, js)
	}
	return list
}

// leafProblems are the problems of the dispatch skills that read well but
// cannot run, their leaf agent missing; the catalog's own warnings do not
// hold them, since the policy says which skills dispatch.
func leafProblems(cat *parse.Catalog, pol engine.Policy) []string {
	var out []string
	for _, s := range cat.Skills() {
		if class, _, _ := pol.Classify(s.Name); class != engine.ClassDispatch || s.Problem != "" {
			continue
		}
		if why := engine.Unusable(s.Name, cat, pol); why != "" {
			out = append(out, s.Dir+": "+why)
		}
	}
	return out
}

// skillCategory names a policy class as gonogo skills shows it.
func skillCategory(c engine.SkillClass) string {
	switch c {
	case engine.ClassDispatch:
		return "dispatch"
	case engine.ClassComposite:
		return "workflow"
	case engine.ClassRefused, engine.ClassSelf:
		return "refused"
	}
	return "content"
}

func printSkills(w io.Writer, cat *parse.Catalog, list []jsonSkill) {
	usable := 0
	for _, s := range list {
		if s.Usable {
			usable++
		}
	}
	fmt.Fprintf(w, "%s (%d usable) from %s\n\n", terminal.Plural(len(list), "skill"), usable, strings.Join(cat.Dirs(), ", "))
	if len(list) == 0 {
		return
	}
	// The table is aligned on its own; each problem is then printed under
	// its skill's row, where tabwriter would break the columns.
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SKILL\tCATEGORY\tLEAF AGENT\tTEMPLATE\tEXAMPLE\tFROM")
	for _, s := range list {
		leaf := "-"
		if s.LeafAgent != nil {
			leaf = *s.LeafAgent
			if !*s.LeafAgentFound {
				leaf += " (missing)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Category, leaf, yesNo(s.HasTemplate), yesNo(s.HasExample), s.Source)
	}
	_ = tw.Flush()
	lines := strings.SplitAfter(table.String(), "\n")
	fmt.Fprint(w, lines[0])
	for i, s := range list {
		fmt.Fprint(w, lines[i+1])
		if s.Problem != nil {
			fmt.Fprintf(w, "  ! cannot be used: %s\n", *s.Problem)
		}
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
