// Package parse reads gonogo's inputs: prioritized-action-plan documents
// (Mode A), chain expressions (Mode B), workflow files, the skills
// directory and the skill policy. It only reads: bytes (or, for the skill
// catalog, a directory, and for the policy, a file) come in, engine values
// or refusals go out. It writes nothing, talks to no service and resolves
// no skill names; pre-flight in engine decides what a run may do with what
// was read, and engine/intake finds workflow files by name, lists them and
// saves new ones.
package parse
