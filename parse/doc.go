// Package parse owns reading gonogo's inputs: prioritized-action-plan
// documents (Mode A), chain expressions (Mode B), workflow files, the
// skills folders and the skill policy. Bytes (or, for the catalog, folders,
// and for the policy, a file) come in; engine values or refusals go out. It
// writes nothing, talks to no service and resolves no skill names:
// pre-flight in engine decides what a run may do with what was read, and
// internal/intake finds workflow files by name, lists them and saves new
// ones.
//
// It imports engine, goldmark (Markdown) and go.yaml.in/yaml (front matter,
// workflows, the policy), and nothing else of gonogo. Reading is linear in
// the size of what is read (MaxNesting, MaxRefParagraphLines and
// MaxSectionHeadingBytes hold the Markdown parser to it). Where a symbolic
// link in a skills folder may lead: docs/inputs.md.
//
//	chain, err := parse.Chain("deliver-prd -> deliver-user-stories -- mobile checkout")
//	doc, err := parse.Plan(src, "plan.md", parse.PlanOptions{})
//	cat, err := parse.LoadCatalog(parse.CatalogOptions{SkillDirs: []string{".claude/skills"}})
package parse
