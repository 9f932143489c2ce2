package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

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

func cmdSkills(_ context.Context, e env, cfg config, f *runFlags) int {
	if len(f.positional) > 0 {
		return fail(e, "skills", usagef("skills takes no arguments (got %q)", f.positional[0]))
	}
	pol, err := parse.LoadPolicy(cfg.Policy)
	if err != nil {
		return fail(e, "skills", fmt.Errorf("policy: %w", err))
	}
	cat, err := cfg.LoadSkills(f.skills)
	if err != nil {
		return fail(e, "skills", err)
	}
	list := terminal.SkillList(cat, pol)
	if f.json {
		if code := writeJSON(e, "skills", list); code != terminal.ExitOK {
			return code
		}
	} else {
		terminal.PrintSkills(e.stdout, cat.Dirs(), list)
	}
	terminal.PrintSkillWarnings(e.stderr, cat.Warnings(), list)
	return terminal.ExitOK
}
