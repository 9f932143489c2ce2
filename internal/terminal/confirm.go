package terminal

import (
	"context"
	"fmt"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/gonogo/gonogo/engine"
)

// confirmAbort asks a person at the terminal to confirm an abort, as
// Slack's Abort button does, for an abort cannot be taken back. The answer
// is one key: y aborts; any other key (Ctrl-C included) keeps the run
// going, back where the abort was asked for. A script's abort line is
// never asked about (see parseDecision): scripts rely on it.
func (d *driver) confirmAbort(ctx context.Context, r *engine.Run, s *engine.Step) bool {
	pctx, release := CatchInterrupt(ctx)
	defer release()
	restore := rawKeys(d.e.Stdin)
	fmt.Fprintf(d.out, "Abort the run? It stops %s; everything produced so far is kept. y aborts, any other key keeps going > ", abortWhere(r, s))
	raw := restore != nil
	answer := d.awaitKey(pctx, raw)
	if raw {
		restore()
	}
	key := strings.ToLower(strings.TrimSpace(answer.line))
	yes := answer.err == nil && pctx.Err() == nil && (key == "y" || key == "yes")
	if ctx.Err() != nil {
		return false
	}
	d.sayAbortAnswer(yes, raw, pctx.Err() != nil || answer.err != nil)
	return yes
}

// abortWhere says where an abort stops the run: at step s, or before the
// next step when there is none.
func abortWhere(r *engine.Run, s *engine.Step) string {
	if s == nil {
		return "before its next step"
	}
	return "at " + StepTitle(r, s)
}

// awaitKey reads the answer to the abort question: one key on a raw
// terminal, a line otherwise; nothing when pctx ends first (Ctrl-C).
func (d *driver) awaitKey(pctx context.Context, raw bool) lineResult {
	ask := d.in.poll
	if raw {
		ask = d.in.pollKey
	}
	select {
	case answer := <-ask():
		d.in.took()
		return answer
	case <-pctx.Done():
		return lineResult{}
	}
}

// sayAbortAnswer ends the question's line; cut says the answer never came
// (Ctrl-C, or input closed), which leaves the cursor after the question.
func (d *driver) sayAbortAnswer(yes, raw, cut bool) {
	if yes {
		if raw {
			fmt.Fprintln(d.out, "y") // a raw terminal does not echo the key
		}
		return
	}
	if raw || cut {
		fmt.Fprintln(d.out)
	}
	fmt.Fprintln(d.out, "Not aborted.")
}

// rawKeys puts stdin, when it is a terminal, in raw mode, so that one key
// answers without Enter; restore puts it back. It returns nil when stdin
// is not a terminal device (a pipe, a test's reader): a line is read then.
func rawKeys(stdin any) (restore func()) {
	f, ok := stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	old, err := term.MakeRaw(int(f.Fd()))
	if err != nil {
		return nil
	}
	return func() { _ = term.Restore(int(f.Fd()), old) }
}
