package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gonogo/gonogo/engine"
)

// maxNumber bounds a step or attempt number in a path: far above any run,
// small enough that no number overflows.
const maxNumber = 1_000_000

// number is a step or attempt number as a path or query gives it: decimal
// digits without a sign or a leading zero, 1 to maxNumber; ok is false for
// anything else.
func number(s string) (int, bool) {
	if s == "" || len(s) > 7 || s[0] == '0' {
		return 0, false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n <= maxNumber
}

// runID is the run a request names, ok false when it is malformed.
func runID(r *http.Request) (engine.RunID, bool) {
	id := engine.RunID(r.PathValue("id"))
	return id, id.WellFormed()
}

// withReader opens the runs for one request and hands them to read; an
// error it returns is answered for people: ErrNotFound is 404.
func (s *Server) withReader(w http.ResponseWriter, r *http.Request, read func(context.Context, Reader) error) {
	src, err := s.open(r.Context())
	if err == nil {
		err = read(r.Context(), src)
		if cerr := src.Close(); cerr != nil {
			s.log.Warn("close the runs", "err", cerr)
		}
	}
	s.fail(w, err)
}

func (s *Server) fail(w http.ResponseWriter, err error) {
	switch {
	case err == nil:
	case errors.Is(err, engine.ErrNotFound):
		http.NotFound(w, nil)
	default:
		s.log.Error("web page", "err", err)
		http.Error(w, "could not read the runs: "+err.Error(), http.StatusInternalServerError)
	}
}

// render writes page name of data, with status.
func (s *Server) render(w http.ResponseWriter, status int, name string, data any) error {
	var b bytes.Buffer
	if err := s.pages.ExecuteTemplate(&b, name, data); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = b.WriteTo(w)
	return nil
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	s.withReader(w, r, func(ctx context.Context, rd Reader) error {
		list, err := rd.List(ctx)
		if err != nil {
			return err
		}
		return s.render(w, http.StatusOK, "list.html", listPage(ctx, rd, list))
	})
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.withReader(w, r, func(ctx context.Context, rd Reader) error {
		run, journal, err := rd.RunWithJournal(ctx, id)
		if err != nil {
			return err
		}
		v := runPage(ctx, rd, run, journal)
		// The line a form's answer keeps is for the page the browser goes
		// to after the form. The old page, following the run, may fetch
		// itself again as the form's decision lands; that fetch must leave
		// the line where it is.
		if r.Header.Get(followHeader) == "" {
			v.Said = s.auth.said(r, string(id))
		}
		if s.decider != nil {
			if err := offerForms(&v, s.auth.csrf(r)); err != nil {
				return err
			}
		}
		return s.render(w, http.StatusOK, "run.html", v)
	})
}

// followHeader marks the run page's own fetch of itself as it follows
// the run (assets/live.js), not a page a person opened.
const followHeader = "X-Gonogo-Follow"

// attemptOf is the step and attempt a request names, ok false when either
// is malformed or the run has no such attempt.
func attemptOf(run *engine.Run, n, a int) bool {
	st := run.Step(n)
	return st != nil && a >= 1 && a <= len(st.Attempts)
}

func (s *Server) raw(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(r)
	n, nok := number(r.PathValue("n"))
	a, aok := number(r.PathValue("a"))
	if !ok || !nok || !aok {
		http.NotFound(w, r)
		return
	}
	s.withReader(w, r, func(ctx context.Context, rd Reader) error {
		body, err := rd.Artifact(ctx, id, n, a)
		if err != nil {
			return err
		}
		h := w.Header()
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-step%d-attempt%d.md"`, id, n, a))
		h.Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
		return nil
	})
}

func (s *Server) diff(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(r)
	n, nok := number(r.PathValue("n"))
	q := r.URL.Query()
	a, aok := number(q.Get("a"))
	if ok && nok && aok && q.Get("edit") == "1" {
		s.editDiff(w, r, id, n, a)
		return
	}
	b, bok := number(q.Get("b"))
	if !ok || !nok || !aok || !bok {
		http.NotFound(w, r)
		return
	}
	s.withReader(w, r, func(ctx context.Context, rd Reader) error {
		run, err := rd.Load(ctx, id)
		if err != nil {
			return err
		}
		if !attemptOf(run, n, a) || !attemptOf(run, n, b) {
			return fmt.Errorf("run %s step %d attempts %d and %d: %w", id, n, a, b, engine.ErrNotFound)
		}
		page := diffPage{Run: run.ID, Step: n, A: a, B: b}
		x, err := rd.Artifact(ctx, id, n, a)
		if err != nil {
			return err
		}
		y, err := rd.Artifact(ctx, id, n, b)
		if err != nil {
			return err
		}
		return s.renderDiff(w, page, x, y)
	})
}

// editDiff compares what the agent wrote for attempt a of step n with the
// text a person put in its place: the attempt's first stored version and
// its last. An attempt nobody edited has nothing to compare.
func (s *Server) editDiff(w http.ResponseWriter, r *http.Request, id engine.RunID, n, a int) {
	s.withReader(w, r, func(ctx context.Context, rd Reader) error {
		run, err := rd.Load(ctx, id)
		if err != nil {
			return err
		}
		st := run.Step(n)
		if !attemptOf(run, n, a) || !editedAttempt(st, a) {
			return fmt.Errorf("run %s step %d attempt %d was not edited: %w", id, n, a, engine.ErrNotFound)
		}
		vs, err := rd.ArtifactVersions(ctx, id, n, a)
		if err != nil {
			return err
		}
		if len(vs) < 2 {
			return fmt.Errorf("run %s step %d attempt %d: the agent's text was not kept, only the edit: %w", id, n, a, engine.ErrNotFound)
		}
		return s.renderDiff(w, diffPage{Run: run.ID, Step: n, A: a, B: a, Edit: true}, vs[0], vs[len(vs)-1])
	})
}

// editedAttempt reports whether attempt a of s was edited by a person.
func editedAttempt(s *engine.Step, a int) bool {
	for _, at := range s.Attempts {
		if at.N == a {
			return at.Edited
		}
	}
	return false
}

// renderDiff shows the diff of x and y in page, or why they were not
// compared.
func (s *Server) renderDiff(w http.ResponseWriter, page diffPage, x, y []byte) error {
	status := http.StatusOK
	var err error
	page.Lines, err = Diff(x, y)
	if tl, ok := errors.AsType[*TooLargeError](err); ok {
		status, page.Refused = http.StatusUnprocessableEntity, tl.Error()
	} else if err != nil {
		return err
	}
	return s.render(w, status, "diff.html", page)
}

// diffPage is the diff of two attempts of a step.
type diffPage struct {
	Run        engine.RunID
	Step, A, B int
	// Edit: the diff is of attempt A's agent text and the edit a person
	// made of it.
	Edit    bool
	Lines   []Line
	Refused string
}
