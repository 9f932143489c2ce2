package web

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strings"

	"github.com/gonogo/gonogo/engine"
)

// Decider is where the page's decisions, pauses and resumes go: the same
// places gonogo decide, pause and resume reach (the gonogo holding the
// data directory, the store when none does, a cluster). The engine there
// applies its rules; the page shows its refusals as they are worded.
// carried reports whether the run goes on from the change now (else with
// gonogo resume).
type Decider interface {
	// Decide applies d; body is the replacement artifact of an edit.
	Decide(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (r *engine.Run, carried bool, err error)
	Pause(ctx context.Context, id engine.RunID, actor string) (r *engine.Run, carried bool, err error)
	// Unpause resumes a paused run in its own mode.
	Unpause(ctx context.Context, id engine.RunID, actor string) (r *engine.Run, carried bool, err error)
	io.Closer
}

// OpenDecider opens a Decider for one request, so that serving the pages
// never holds a data directory's store between requests.
type OpenDecider func(ctx context.Context) (Decider, error)

// formSlack is what a decision form may carry besides the edited artifact.
const formSlack = 64 << 10

// form is a decision as the page's form posted it.
type form struct {
	Run     engine.RunID
	CSRF    string
	Key     string
	Kind    engine.DecisionKind
	Step    int
	Attempt int
	// Candidate is, for a pick, the candidate's number in its round.
	Candidate int
	Feedback  string
	Body      string
	Preview   template.HTML // the edit rendered, on the preview page
	Refused   string
}

func (f form) decision(actor string) engine.Decision {
	return engine.Decision{Kind: f.Kind, Step: f.Step, Attempt: f.Attempt, Candidate: f.Candidate, Key: f.Key, Feedback: f.Feedback, Actor: actor}
}

// readForm reads a posted decision; status is not 0 when it is refused
// before anything is decided, with the words to answer.
func (s *Server) readForm(w http.ResponseWriter, r *http.Request) (form, int, string) {
	id, ok := runID(r)
	if !ok {
		return form{}, http.StatusNotFound, "no such run"
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.maxEdit+formSlack)
	if err := r.ParseForm(); err != nil {
		if _, big := errors.AsType[*http.MaxBytesError](err); big {
			return form{}, http.StatusRequestEntityTooLarge, fmt.Sprintf("Refused: the form is over the %d-byte artifact limit (GONOGO_MAX_ARTIFACT); nothing was decided.", s.maxEdit)
		}
		return form{}, http.StatusBadRequest, "Refused: the form could not be read: " + err.Error()
	}
	if !s.auth.checkCSRF(r) {
		return form{}, http.StatusForbidden, "Refused: this form's security token is missing or wrong (a form from another session or another site). Nothing was decided; reload the run's page and decide there."
	}
	p := r.PostForm
	f := form{Run: id, CSRF: p.Get("csrf"), Key: p.Get("key"), Feedback: p.Get("feedback"),
		// A browser sends a textarea's lines ended CRLF whatever they were;
		// artifacts end theirs LF.
		Body: strings.ReplaceAll(p.Get("body"), "\r\n", "\n")}
	kind, err := engine.ParseDecisionKind(p.Get("kind"))
	n, nok := number(p.Get("step"))
	a, aok := number(p.Get("attempt"))
	if err != nil || !nok || !aok || f.Key == "" {
		return form{}, http.StatusBadRequest, "Refused: the form lacks its decision, step, attempt or key; reload the run's page and decide there."
	}
	f.Kind, f.Step, f.Attempt = kind, n, a
	if kind == engine.DecidePick {
		c, ok := number(p.Get("candidate"))
		if !ok {
			return form{}, http.StatusBadRequest, "Refused: the pick form lacks its candidate; reload the run's page and pick there."
		}
		f.Candidate = c
	}
	return f, 0, ""
}

func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	f, status, words := s.readForm(w, r)
	if status != 0 {
		http.Error(w, words, status)
		return
	}
	switch {
	case f.Kind == engine.DecidePick:
		s.pick(w, r, f)
		return
	case f.Kind == engine.DecideAbort && r.PostForm.Get("confirm") != "yes":
		s.fail(w, s.render(w, http.StatusOK, "confirm.html", f))
		return
	case f.Kind == engine.DecideEdit && int64(len(f.Body)) > s.maxEdit:
		f.Refused = fmt.Sprintf("The edited artifact is %d bytes, over the %d-byte artifact limit (GONOGO_MAX_ARTIFACT): shorten it. Nothing was decided.", len(f.Body), s.maxEdit)
		s.fail(w, s.render(w, http.StatusRequestEntityTooLarge, "edit.html", f))
		return
	case f.Kind == engine.DecideEdit && r.PostForm.Has("preview"):
		f.Preview = renderMarkdown([]byte(f.Body))
		s.fail(w, s.render(w, http.StatusOK, "edit.html", f))
		return
	}
	var body []byte
	if f.Kind == engine.DecideEdit {
		body = []byte(f.Body)
	}
	d := f.decision(s.actorOf(r))
	line, err := s.withDecider(r.Context(), func(ctx context.Context, dc Decider) (string, error) {
		_, carried, err := dc.Decide(ctx, f.Run, d, body)
		if err != nil {
			return s.refused(ctx, f.Run, d, err), nil
		}
		return decided(d, f.Run) + goesOn(f.Run, carried), nil
	})
	s.answer(w, r, f.Run, line, err)
}

// pauseOrResume pauses the run, or resumes it.
func (s *Server) pauseOrResume(pause bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { s.pauseForm(w, r, pause) }
}

func (s *Server) pauseForm(w http.ResponseWriter, r *http.Request, pause bool) {
	id, ok := runID(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, formSlack)
	if err := r.ParseForm(); err != nil || !s.auth.checkCSRF(r) {
		http.Error(w, "Refused: this form's security token is missing or wrong (a form from another session or another site). Nothing changed; reload the run's page.", http.StatusForbidden)
		return
	}
	line, err := s.withDecider(r.Context(), func(ctx context.Context, dc Decider) (string, error) {
		if pause {
			_, carried, err := dc.Pause(ctx, id, s.actorOf(r))
			return paused(id, carried, err)
		}
		_, carried, err := dc.Unpause(ctx, id, s.actorOf(r))
		return resumed(id, carried, err)
	})
	s.answer(w, r, id, line, err)
}

// withDecider opens the Decider for one request and closes it after do.
func (s *Server) withDecider(ctx context.Context, do func(context.Context, Decider) (string, error)) (string, error) {
	dc, err := s.decider(ctx)
	if err != nil {
		return "", err
	}
	defer func() {
		if cerr := dc.Close(); cerr != nil {
			s.log.Warn("close the decider", "err", cerr)
		}
	}()
	return do(ctx, dc)
}

// answer sends the browser back to the run's page, where line shows once;
// an error that is no refusal is answered as the readers' are.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, id engine.RunID, line string, err error) {
	// Even a refusal may mean the run moved on elsewhere: the pages
	// following it look now.
	s.follow.changed(id)
	switch {
	case errors.Is(err, engine.ErrNotFound):
		http.NotFound(w, r)
		return
	case err != nil:
		s.log.Error("web form", "run", id, "err", err)
		http.Error(w, "Nothing was decided: "+err.Error(), http.StatusInternalServerError)
		return
	}
	s.auth.say(r, string(id), line)
	http.Redirect(w, r, "/runs/"+string(id), http.StatusSeeOther)
}

// refused words the engine's refusal of d, or its failure to record it
// (see engine.IsRefusal). A decision the run recorded under d's key
// already is this form sent twice: it is answered as made.
func (s *Server) refused(ctx context.Context, id engine.RunID, d engine.Decision, err error) string {
	if src, oerr := s.open(ctx); oerr == nil {
		run, lerr := src.Load(ctx, id)
		_ = src.Close()
		if lerr == nil {
			if rec, kerr := engine.KeyedBefore(run, d); rec != nil && kerr == nil {
				return "Already decided with this form: " + engine.DescribeDecision(*rec) + "; nothing applied twice."
			}
		}
	}
	if !engine.IsRefusal(err) && !errors.Is(err, engine.ErrNotFound) {
		// Not the run's rules but a failure: the decision may or may
		// not have been recorded (a holder that stopped answering may
		// have recorded it), so the page says only what it knows.
		return "Not confirmed: " + err.Error() + ". Reload the run's page to see whether the decision was recorded."
	}
	return "Refused: " + err.Error()
}

// decided is the one line a decision made from the page answers.
func decided(d engine.Decision, id engine.RunID) string {
	switch d.Kind {
	case engine.DecideApprove:
		return fmt.Sprintf("Approved step %d.", d.Step)
	case engine.DecideSkip:
		return fmt.Sprintf("Skipped step %d.", d.Step)
	case engine.DecideRedo:
		return fmt.Sprintf("Asked for a redo of step %d.", d.Step)
	case engine.DecideEdit:
		return fmt.Sprintf("Edited step %d: your text is its artifact.", d.Step)
	case engine.DecideAbort:
		return fmt.Sprintf("Aborted run %s.", id)
	case engine.DecidePick:
		return fmt.Sprintf("Picked candidate %d of step %d: its artifact is the step's.", d.Candidate, d.Step)
	}
	return engine.DescribeDecision(d) + "."
}

// goesOn says who goes on with the run when no gonogo carries it out.
func goesOn(id engine.RunID, carried bool) string {
	if carried {
		return ""
	}
	return fmt.Sprintf(" Recorded: no gonogo holds the data directory, so the run goes on with gonogo resume %s.", id)
}

// paused words a pause as gonogo pause does.
func paused(id engine.RunID, carried bool, err error) (string, error) {
	switch {
	case errors.Is(err, engine.ErrPaused):
		return fmt.Sprintf("Nothing changed: %v.", err), nil
	case errors.Is(err, engine.ErrNotMoving), errors.Is(err, engine.ErrForbidden):
		return fmt.Sprintf("Refused: %v", err), nil
	case err != nil:
		return "", err
	}
	return fmt.Sprintf("Paused run %s: the steps running now finish and wait; no step starts until it is resumed.", id) + goesOn(id, carried), nil
}

// resumed words a resume as gonogo resume does.
func resumed(id engine.RunID, carried bool, err error) (string, error) {
	switch {
	case errors.Is(err, engine.ErrNotPaused):
		return fmt.Sprintf("Nothing changed: %v.", err), nil
	case errors.Is(err, engine.ErrForbidden):
		return fmt.Sprintf("Refused: %v", err), nil
	case err != nil:
		return "", err
	}
	return fmt.Sprintf("Resumed run %s.", id) + goesOn(id, carried), nil
}
