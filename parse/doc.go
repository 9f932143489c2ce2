// Package parse reads gonogo's inputs: prioritized-action-plan documents
// (Mode A), chain expressions (Mode B), workflow files, the skills
// directory and the skill policy. It only reads: bytes (or, for the skill
// catalog, a directory, and for the policy, a file) come in, engine values
// or refusals go out. It writes nothing, talks to no service and resolves
// no skill names; pre-flight in engine decides what a run may do with what
// was read, and internal/intake finds workflow files by name, lists them and
// saves new ones.
//
// Symbolic links in a skills folder: gonogo reads a skill's SKILL.md, its
// references/TEMPLATE.md and, for a dispatch skill, its leaf agent's file,
// and the agent may read anything under the skill's references/. The skills
// folder may itself be a link (a dotfiles checkout), and so may a skill's
// folder, wherever it leads (installers link each skill into a shared
// checkout such as ~/.agents/skills). Inside, a link may lead anywhere within
// the skills folder or within the skill's own folder, as both resolve; a
// SKILL.md, or anything under references/, that leads elsewhere makes the
// skill unusable, its problem naming the file and where it leads, and is
// never read. A leaf agent's file may lead anywhere within its agents
// folder and nowhere else. Files are read after that check through an
// os.Root of the folder they were found in, so a link swapped in meanwhile
// cannot lead out either.
//
// Reading is linear in the size of what is read: see MaxNesting,
// MaxRefParagraphLines and MaxSectionHeadingBytes for the limits that hold
// the Markdown parser to it.
package parse
