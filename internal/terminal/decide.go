package terminal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gonogo/gonogo/engine"
)

// checkpoint asks for a decision on step s.
func (d *driver) checkpoint(ctx context.Context, r *engine.Run, s *engine.Step) (*engine.Run, int, bool) {
	allowed := engine.Allowed(s)
	if engine.Picking(s) {
		PrintCandidates(d.out, s)
	}
	for {
		line, t := d.checkpointLine(ctx, r, s, allowed)
		if t == nil {
			t = d.takeLine(ctx, r, s, line, allowed)
		}
		if !t.again {
			return t.next, t.code, t.done
		}
	}
}

// turn is what one question at a checkpoint came to: ask again, or return
// next, code and done to drive.
type turn struct {
	next  *engine.Run
	code  int
	done  bool
	again bool
}

// checkpointLine asks for a decision line; t is not nil when there is none
// to take: the run was decided elsewhere, gonogo was stopped, or the input
// ended or was refused.
func (d *driver) checkpointLine(ctx context.Context, r *engine.Run, s *engine.Step, allowed []engine.DecisionKind) (string, *turn) {
	if d.tty {
		fmt.Fprintf(d.out, "%s %s > ", StepTitle(r, s), pausedPrompt(r, allowed))
	}
	line, err := d.readOrMoved(ctx, r)
	switch {
	case errors.Is(err, errMovedOn):
		// Decided elsewhere: drive shows what happened and asks about
		// what is next.
		if d.tty {
			fmt.Fprintln(d.out)
		}
		return "", &turn{}
	case ctx.Err() != nil:
		d.stopped(r, s)
		return "", &turn{code: ExitWaiting, done: true}
	case tooLong(err):
		return "", d.badTurn(r, err)
	case err != nil && (line == "" || !errors.Is(err, io.EOF)):
		return "", &turn{code: d.leave(r, s), done: true}
	}
	return line, nil
}

// badTurn refuses a line: ask again, or leave the run waiting (exit 2).
func (d *driver) badTurn(r *engine.Run, err error) *turn {
	if d.badLine(r, err) {
		return &turn{again: true}
	}
	return &turn{code: ExitUsage, done: true}
}

// takeLine acts on a decision line: it resumes a paused run, or sends the
// decision it reads to the backend.
func (d *driver) takeLine(ctx context.Context, r *engine.Run, s *engine.Step, line string, allowed []engine.DecisionKind) *turn {
	if m, ok := ResumeWords(line); ok && r.PausedByPerson() {
		next, code, done := d.unpause(ctx, r, m)
		return &turn{next: next, code: code, done: done}
	}
	dec, body, err := d.parseDecision(ctx, r, s, strings.TrimSpace(line), allowed)
	switch {
	case ctx.Err() != nil:
		d.stopped(r, s)
		return &turn{code: ExitWaiting, done: true}
	case err != nil:
		return d.badTurn(r, err)
	case dec == nil:
		return &turn{again: true}
	}
	return d.send(ctx, r, s, dec, body)
}

// send records decision dec on step s; a decision the run moved past
// meanwhile is refused, and the run goes on as it now stands.
func (d *driver) send(ctx context.Context, r *engine.Run, s *engine.Step, dec *engine.Decision, body []byte) *turn {
	if dec.Kind != engine.DecidePick { // a pick names its candidate's attempt
		dec.Attempt = AttemptN(s.Latest())
	}
	dec.Step, dec.Actor = s.N, d.actor
	dec.Key = "cli:" + RandomKey()
	next, err := d.svc.Decide(ctx, r.ID, *dec, body)
	switch {
	case err == nil:
		return &turn{next: next}
	case engine.IsRefusal(err):
		next, code, done := d.refused(ctx, r.ID, err)
		return &turn{next: next, code: code, done: done}
	}
	fmt.Fprintf(d.e.Stderr, "gonogo: the decision was not recorded: %v\n", err)
	return &turn{code: ExitUsage, done: true}
}

// badLine says why a decision line was not taken, and whether to ask
// again: a person at a terminal is asked again; a script, which could
// only go on guessing, leaves the run waiting (exit 2).
func (d *driver) badLine(r *engine.Run, err error) (again bool) {
	fmt.Fprintln(d.e.Stderr, "gonogo:", err)
	if d.tty {
		return true
	}
	fmt.Fprintf(d.e.Stderr, "The run is kept, waiting: gonogo resume %s%s\n", r.ID, DataFlag(d.data))
	return false
}

// refused says why the run did not take the terminal's word (it moved on
// meanwhile) and carries on with the run as it now stands.
func (d *driver) refused(ctx context.Context, id engine.RunID, err error) (*engine.Run, int, bool) {
	fmt.Fprintln(d.e.Stderr, "gonogo:", err)
	cur, lerr := d.svc.Load(ctx, id)
	if lerr != nil {
		fmt.Fprintln(d.e.Stderr, "gonogo:", lerr)
		return nil, ExitUsage, true
	}
	return cur, 0, false
}

// errMovedOn ends a wait for a decision line when the run moved on without
// one.
var errMovedOn = errors.New("the run moved on")

// readOrMoved reads a decision line, or gives way with errMovedOn when the
// run changes meanwhile (decided with gonogo decide, say).
func (d *driver) readOrMoved(ctx context.Context, r *engine.Run) (string, error) {
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.watchMoved(r, cancel, stop)
	}()
	line, err := d.in.read(rctx)
	close(stop)
	wg.Wait()
	if ctx.Err() == nil && errors.Is(context.Cause(rctx), errMovedOn) {
		return "", errMovedOn
	}
	return line, err
}

// watchMoved cancels the read of a decision line with errMovedOn once the
// box tells of a newer state of r, until stop closes.
func (d *driver) watchMoved(r *engine.Run, cancel context.CancelCauseFunc, stop <-chan struct{}) {
	for {
		select {
		case <-d.box.signal:
			if d.box.newer(r.ID, r.Seq) {
				cancel(errMovedOn)
				return
			}
		case <-stop:
			return
		}
	}
}

func AttemptN(a *engine.Attempt) int {
	if a == nil {
		return 0
	}
	return a.N
}

func promptFor(allowed []engine.DecisionKind) string {
	labels := map[engine.DecisionKind]string{
		engine.DecideApprove: "[a]pprove", engine.DecideEdit: "[e]dit", engine.DecideSkip: "[s]kip",
		engine.DecideRedo: "[r]edo", engine.DecideAbort: "a[b]ort", engine.DecidePick: "[p]ick N",
	}
	var parts []string
	for _, k := range allowed {
		parts = append(parts, labels[k])
	}
	return strings.Join(parts, " ")
}

// pausedPrompt is the checkpoint prompt of a paused run: its decisions,
// and resuming it in its mode.
func pausedPrompt(r *engine.Run, allowed []engine.DecisionKind) string {
	p := promptFor(allowed)
	if r.PausedByPerson() {
		p += " [c]ontinue " + ModeWord(r.Mode)
	}
	return strings.TrimSpace(p)
}

// parseDecision reads one decision line: approve, skip, redo [feedback],
// abort, edit PATH, pick N [note]; on a terminal also a, s, r, b, p and e
// (which opens $EDITOR). An empty line on a terminal asks again.
func (d *driver) parseDecision(ctx context.Context, r *engine.Run, s *engine.Step, line string, allowed []engine.DecisionKind) (*engine.Decision, []byte, error) {
	if line == "" {
		return nil, nil, d.emptyDecision()
	}
	word, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	k, err := decisionKind(r, s, word, allowed)
	if err != nil {
		return nil, nil, err
	}
	switch k {
	case engine.DecideAbort:
		return d.abortDecision(ctx, r, s)
	case engine.DecideRedo:
		return d.redoDecision(ctx, rest)
	case engine.DecideEdit:
		return d.editDecision(ctx, r, s, rest, allowed)
	case engine.DecidePick:
		return pickDecision(r, s, rest)
	}
	return &engine.Decision{Kind: k}, nil, nil
}

// emptyDecision answers an empty decision line: a person at a terminal is
// asked again (nil); a script's empty line is an error.
func (d *driver) emptyDecision() error {
	if d.tty {
		return nil
	}
	return fmt.Errorf("empty decision line; expected one of: approve, edit PATH, skip, redo [feedback], abort")
}

// decisionWord is the decision each word of a decision line names, in
// full and as the one key a terminal takes.
var decisionWord = map[string]engine.DecisionKind{
	"approve": engine.DecideApprove, "a": engine.DecideApprove, "edit": engine.DecideEdit, "e": engine.DecideEdit,
	"skip": engine.DecideSkip, "s": engine.DecideSkip, "redo": engine.DecideRedo, "r": engine.DecideRedo,
	"abort": engine.DecideAbort, "b": engine.DecideAbort, "pick": engine.DecidePick, "p": engine.DecidePick,
}

// decisionKind is the decision word names, once the engine says it is
// possible at step s now.
func decisionKind(r *engine.Run, s *engine.Step, word string, allowed []engine.DecisionKind) (engine.DecisionKind, error) {
	k, ok := decisionWord[strings.ToLower(word)]
	if !ok {
		return "", fmt.Errorf("%q is not a decision; expected one of: %s", Clip(word, 40), WordsFor(allowed))
	}
	var np *engine.NotPossible
	if errors.As(engine.CheckDecision(r, s, k), &np) {
		// The engine's refusal, with the choices in the words typed here.
		return "", fmt.Errorf("%s is not possible at step %d now (%s); expected one of: %s", k, s.N, np.Result, WordsFor(np.Allowed))
	}
	return k, nil
}

// abortDecision is an abort, once a person at a terminal confirms it.
func (d *driver) abortDecision(ctx context.Context, r *engine.Run, s *engine.Step) (*engine.Decision, []byte, error) {
	if d.tty && !d.confirmAbort(ctx, r, s) {
		return nil, nil, nil
	}
	return &engine.Decision{Kind: engine.DecideAbort}, nil, nil
}

// redoDecision is "redo [feedback]"; a person at a terminal who typed no
// feedback is asked for it.
func (d *driver) redoDecision(ctx context.Context, feedback string) (*engine.Decision, []byte, error) {
	if d.tty && feedback == "" {
		fb, back := d.ask(ctx, "Feedback for the agent (optional, Enter to skip, Ctrl-C to go back): ")
		if back {
			return nil, nil, nil
		}
		feedback = fb
	}
	return &engine.Decision{Kind: engine.DecideRedo, Feedback: feedback}, nil, nil
}

// pickDecision is "pick N [note]": candidate N of step s, with the note
// as why.
func pickDecision(r *engine.Run, s *engine.Step, rest string) (*engine.Decision, []byte, error) {
	num, note, _ := strings.Cut(rest, " ")
	n, err := strconv.Atoi(num)
	if err != nil {
		return nil, nil, fmt.Errorf("pick needs the number of a candidate (1 to %d): pick N [note]", len(engine.Candidates(s)))
	}
	dec, err := engine.PickDecision(r, s.N, n, "", strings.TrimSpace(note))
	if err != nil {
		return nil, nil, err
	}
	return &dec, nil, nil
}

// editDecision is an edit: the replacement artifact read from path, or,
// with no path on a terminal, written in $EDITOR.
func (d *driver) editDecision(ctx context.Context, r *engine.Run, s *engine.Step, path string, allowed []engine.DecisionKind) (*engine.Decision, []byte, error) {
	switch {
	case path == "" && d.tty && d.live:
		return d.editInEditor(ctx, r, s, allowed)
	case path == "" && d.tty:
		return nil, nil, fmt.Errorf("edit needs the path of the replacement artifact here (stdout is not a terminal, so no editor opens): edit PATH")
	case path == "":
		return nil, nil, fmt.Errorf("edit needs the path of the replacement artifact: edit PATH")
	}
	return d.editFrom(path)
}

// editFrom is an edit whose replacement artifact is read from path.
func (d *driver) editFrom(path string) (*engine.Decision, []byte, error) {
	body, err := d.readEdit(path)
	if err != nil {
		return nil, nil, err
	}
	return &engine.Decision{Kind: engine.DecideEdit}, body, nil
}

// ask asks a question on the terminal that Ctrl-C (or end of input) backs
// out of: back is true when it did, and the caller returns to the
// checkpoint. A second Ctrl-C there stops gonogo.
func (d *driver) ask(ctx context.Context, question string) (answer string, back bool) {
	pctx, release := CatchInterrupt(ctx)
	defer release()
	fmt.Fprint(d.out, question)
	line, err := d.in.read(pctx)
	switch {
	case WasInterrupted(pctx):
		fmt.Fprintln(d.out, "\nBack at the checkpoint (Ctrl-C there stops gonogo; the run is kept).")
		return "", true
	case ctx.Err() != nil:
		return "", true
	case tooLong(err):
		fmt.Fprintln(d.e.Stderr, "gonogo:", err)
		fmt.Fprintln(d.out, "Back at the checkpoint.")
		return "", true
	case err != nil && strings.TrimSpace(line) == "":
		fmt.Fprintln(d.out, "\nBack at the checkpoint.")
		return "", true
	}
	return strings.TrimSpace(line), false
}

func WordsFor(allowed []engine.DecisionKind) string {
	var w []string
	for _, k := range allowed {
		word, ok := decisionUsage[k]
		if !ok {
			word = string(k)
		}
		w = append(w, word)
	}
	return strings.Join(w, ", ")
}

// decisionUsage is how a decision that takes more than its word is typed.
var decisionUsage = map[engine.DecisionKind]string{
	engine.DecideEdit: "edit PATH", engine.DecideRedo: "redo [feedback]", engine.DecidePick: "pick N [note]",
}

// editInEditor opens $VISUAL or $EDITOR on the current artifact and
// returns the edit. Closed unchanged, it records no edit: it asks whether
// to approve the artifact as it is, edit again or go back to the
// checkpoint (a nil decision).
func (d *driver) editInEditor(ctx context.Context, r *engine.Run, s *engine.Step, allowed []engine.DecisionKind) (*engine.Decision, []byte, error) {
	cur, _ := d.svc.Artifact(ctx, r.ID, s.N, s.Latest().N)
	name, err := editFile(s, cur)
	if err != nil {
		return nil, nil, fmt.Errorf("edit: %w", err)
	}
	defer os.Remove(name)
	for {
		if back, err := d.runEditor(ctx, name); back || err != nil {
			return nil, nil, err
		}
		if now, err := os.ReadFile(name); err != nil || !bytes.Equal(now, cur) {
			return d.editFrom(name)
		}
		switch d.askUnchanged(ctx, slices.Contains(allowed, engine.DecideApprove)) {
		case engine.DecideApprove:
			return &engine.Decision{Kind: engine.DecideApprove}, nil, nil
		case engine.DecideEdit:
			continue
		}
		return nil, nil, nil
	}
}

// editFile writes the artifact cur of step s to a new temporary file for
// the editor, and names it; the caller removes it.
func editFile(s *engine.Step, cur []byte) (string, error) {
	f, err := os.CreateTemp("", fmt.Sprintf("gonogo-%02d-%s-*.md", s.N, s.Skill))
	if err != nil {
		return "", err
	}
	_, err = f.Write(cur)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// askUnchanged asks what to do after the editor closed with the artifact
// unchanged: approve (when allowed), edit again, or "" to go back.
func (d *driver) askUnchanged(ctx context.Context, canApprove bool) engine.DecisionKind {
	q := "The artifact is unchanged, so no edit is recorded. "
	if canApprove {
		q += "[a]pprove it as it is, [e]dit again, or [c]heckpoint (back) > "
	} else {
		q += "[e]dit again, or [c]heckpoint (back) > "
	}
	for {
		ans, back := d.ask(ctx, q)
		if back {
			return ""
		}
		k, ok := unchangedAnswer[strings.ToLower(ans)]
		if ok && (k != engine.DecideApprove || canApprove) {
			return k
		}
		fmt.Fprintf(d.e.Stderr, "gonogo: %q is not one of the choices\n", Clip(ans, 40))
	}
}

// unchangedAnswer is what each answer to askUnchanged asks for; "" goes
// back to the checkpoint.
var unchangedAnswer = map[string]engine.DecisionKind{
	"a": engine.DecideApprove, "approve": engine.DecideApprove, "e": engine.DecideEdit, "edit": engine.DecideEdit,
	"c": "", "checkpoint": "", "back": "", "": "",
}

// runEditor runs the editor on path. Ctrl-C while it runs goes back to the
// checkpoint (back is true).
func (d *driver) runEditor(ctx context.Context, path string) (back bool, err error) {
	editor := editorOf(d.e.Getenv)
	pctx, release := CatchInterrupt(ctx)
	defer release()
	args := append(strings.Fields(editor), path)
	cmd := exec.CommandContext(pctx, args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	switch {
	case WasInterrupted(pctx):
		fmt.Fprintln(d.out, "\nBack at the checkpoint (Ctrl-C there stops gonogo; the run is kept).")
		return true, nil
	case ctx.Err() != nil:
		return true, nil
	case err != nil:
		return false, fmt.Errorf("edit: the editor %q: %w", editor, err)
	}
	return false, nil
}

// editorOf is the editor a person chose: $VISUAL, else $EDITOR, else vi.
func editorOf(getenv func(string) string) string {
	if editor := getenv("VISUAL"); editor != "" {
		return editor
	}
	if editor := getenv("EDITOR"); editor != "" {
		return editor
	}
	return "vi"
}

// readEdit reads a replacement artifact from path.
func (d *driver) readEdit(path string) ([]byte, error) {
	b, err := ReadRegular(path, d.maxEdit, "edit file")
	if err != nil {
		return nil, err // it names the edit file
	}
	if int64(len(b)) > d.maxEdit {
		return nil, fmt.Errorf("edit: %s is larger than the %d-byte artifact limit (GONOGO_MAX_ARTIFACT)", path, d.maxEdit)
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil, fmt.Errorf("edit: %s is empty; to move on without an artifact, skip the step", path)
	}
	return b, nil
}

// PrintCandidates lists, numbered, the candidates a best-of step waits
// on people to pick from, with how to pick one.
func PrintCandidates(w io.Writer, s *engine.Step) {
	fmt.Fprintf(w, "Candidates of step %d (pick N [note] takes one as the step's artifact):\n", s.N)
	for _, a := range engine.Candidates(s) {
		line := fmt.Sprintf("  %d. %-8s %s", a.Candidate, a.Runner, engine.ResultText(a.Result, a.Reason))
		if a.Summary != "" {
			line += " - " + Clip(OneLine(a.Summary), 80)
		}
		if !engine.Pickable(a) {
			line += "  (cannot be picked)"
		}
		fmt.Fprintln(w, line)
	}
}
