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
	where := "before its next step"
	if s != nil {
		where = "at " + StepTitle(r, s)
	}
	pctx, release := CatchInterrupt(ctx)
	defer release()
	restore := rawKeys(d.e.Stdin)
	fmt.Fprintf(d.out, "Abort the run? It stops %s; everything produced so far is kept. y aborts, any other key keeps going > ", where)
	ask := d.in.poll
	if restore != nil {
		ask = d.in.pollKey
	}
	var answer lineResult
	select {
	case answer = <-ask():
		d.in.took()
	case <-pctx.Done():
	}
	raw := restore != nil
	if raw {
		restore()
	}
	key := strings.ToLower(strings.TrimSpace(answer.line))
	yes := answer.err == nil && pctx.Err() == nil && (key == "y" || key == "yes")
	switch {
	case ctx.Err() != nil:
		return false
	case yes && raw:
		fmt.Fprintln(d.out, "y") // a raw terminal does not echo the key
	case !yes:
		if raw || pctx.Err() != nil || answer.err != nil {
			fmt.Fprintln(d.out)
		}
		fmt.Fprintln(d.out, "Not aborted.")
	}
	return yes
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
