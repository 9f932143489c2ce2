package main

import "github.com/gonogo/gonogo/internal/terminal"

// What the read commands print as JSON is the terminal's to shape; the
// CLI tests decode it under these names.
type (
	jsonRun     = terminal.RunJSON
	jsonRunLine = terminal.RunLineJSON
	jsonCheck   = terminal.CheckJSON
	jsonSkill   = terminal.SkillJSON
)
