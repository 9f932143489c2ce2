// Package parse reads gonogo's inputs: prioritized-action-plan documents
// (Mode A), chain expressions (Mode B), workflow files and the skills
// directory. It only reads: bytes (or, for the skill catalog, a directory)
// come in, engine values or refusals go out. It writes nothing, talks to no
// service and resolves no skill names; pre-flight in engine decides what a
// run may do with what was read.
package parse
