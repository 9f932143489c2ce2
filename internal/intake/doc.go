// Package intake is gonogo's one way in: it turns a request to start a run
// (a plan document's bytes, a chain expression, or a named workflow with
// its arguments and context; the flags given with it; who asked, from
// where, under which idempotency key) into the engine.Plan and the
// engine.StartOptions a run starts from, or into a refusal. The terminal
// (gonogo run, check, demo) and the Slack bot (/gonogo chain, /gonogo run,
// a mention with a plan file) both call Take, so an input is read, its
// flags merged and pre-flighted the same way wherever it arrives.
//
// It sits between parse, which reads bytes, and engine, which holds the
// rules (pre-flight); engine itself imports only the standard library, so
// the intake is a package of its own, as internal/runner is. It reads through
// what it is given (the skill catalog, the policy, the workflows), so tests
// give it fakes.
//
// It also owns the workflows directory (Dir): finding a workflow file by
// name, listing the workflows, and saving a chain as one, which both front
// ends offer. parse reads a workflow file's bytes and writes nothing.
package intake
