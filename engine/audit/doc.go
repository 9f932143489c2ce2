// Package audit owns a run's audit trail: every step and attempt, each
// decision with who made it, when and on which attempt, each edit as a
// unified diff against the agent's own artifact, redo feedback, artifact
// sha256 sums, costs and durations, and the run's journal. It is what a
// team hands to someone who was not in the thread (gonogo export, and the
// file a Slack run's thread gets at its end).
//
// The trail is built from what the store keeps (the run, its journal and
// every version of each artifact) and nothing else, so it can be written
// again at any time and reads the same. Building it is pure: the caller
// reads the store, through Source. It imports engine and go-udiff (for the
// diffs) and nothing else of gonogo. The JSON shape is a contract (Version
// says which); the Markdown is for people.
//
//	trail, err := audit.Build(audit.Source{Run: run, Journal: journal,
//		Versions: func(step, attempt int) ([][]byte, error) {
//			return db.ArtifactVersions(ctx, run.ID, step, attempt)
//		}}, time.Now())
//	if err != nil {
//		return err
//	}
//	js, err := trail.JSON() // or trail.Markdown()
package audit
