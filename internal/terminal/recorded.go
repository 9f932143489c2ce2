package terminal

import (
	"fmt"
	"io"

	"github.com/gonogo/gonogo/engine"
)

// Recorded is where gonogo decide, pause or resume of a held run leaves
// the run, and who carries it on from there.
type Recorded struct {
	Run  *engine.Run // as the command left it
	Data string      // the data directory, as given
	// Holder names the gonogo that holds the data directory, "" when none
	// does (the store itself recorded it); Carried says the holder goes on
	// with the run now, rather than after the run it carries out.
	Holder  string
	Carried bool
}

// Decided says what gonogo decide applied (d, on step d.Step), and how the
// run goes on.
func (v Recorded) Decided(w io.Writer, d engine.Decision) {
	r := v.Run
	fmt.Fprintf(w, "%s: %s (attempt %d) by %s%s\n", StepTitle(r, r.Step(d.Step)), d.Kind, d.Attempt, d.Actor, feedbackNote(d.Feedback))
	fmt.Fprintf(w, "Run %s is %s; step %d is %s.\n", r.ID, r.State, d.Step, r.Step(d.Step).Status)
	switch {
	case r.Finished():
	case v.Carried:
		fmt.Fprintf(w, "Carried out by %s, which goes on with the run.\n", v.Holder)
	case v.Holder != "":
		v.afterAnother(w)
	default:
		fmt.Fprintf(w, "No gonogo holds %s: the decision is recorded, and the run goes on with: gonogo resume %s%s\n", v.Data, r.ID, DataFlag(v.Data))
	}
}

func feedbackNote(fb string) string {
	if fb == "" {
		return ""
	}
	return fmt.Sprintf(" with feedback %q", Clip(OneLine(fb), 80))
}

// Paused says that who paused the run, and how it is resumed.
func (v Recorded) Paused(w io.Writer, who string) {
	r := v.Run
	fmt.Fprintf(w, "Run %s paused by %s.\n", r.ID, who)
	switch {
	case r.State == engine.RunRunning:
		fmt.Fprintln(w, "The running steps finish and wait at a checkpoint; no step starts until it is resumed.")
	default:
		fmt.Fprintln(w, "No step starts until it is resumed.")
	}
	switch {
	case v.Carried:
		fmt.Fprintf(w, "The run is held by %s. Resume with: gonogo resume %s%s\n", v.Holder, r.ID, DataFlag(v.Data))
	case v.Holder != "":
		fmt.Fprintf(w, "Recorded by %s, which carries out another run. Resume with: gonogo resume %s%s\n", v.Holder, r.ID, DataFlag(v.Data))
	default:
		fmt.Fprintf(w, "No gonogo holds %s: the pause is recorded. Resume with: gonogo resume %s%s\n", v.Data, r.ID, DataFlag(v.Data))
	}
}

// Resumed says that who resumed a paused run its holder keeps, and how
// it goes on.
func (v Recorded) Resumed(w io.Writer, who string) {
	r := v.Run
	fmt.Fprintf(w, "Run %s resumed by %s (%s).\n", r.ID, who, ModeWord(r.Mode))
	if v.Carried {
		fmt.Fprintf(w, "%s goes on with it.\n", v.Holder)
		return
	}
	v.afterAnother(w)
}

// afterAnother says the holder recorded it while it carries out another
// run, which this one waits for.
func (v Recorded) afterAnother(w io.Writer) {
	fmt.Fprintf(w, "Recorded by %s, which carries out another run: this one goes on with gonogo resume %s%s once that gonogo is done.\n", v.Holder, v.Run.ID, DataFlag(v.Data))
}
