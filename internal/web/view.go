package web

import (
	"context"
	"html/template"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
)

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
}

// listEntry is one run of the list, in the words gonogo runs uses.
type listEntry struct {
	engine.RunSummary
	State string
}

// listPage groups the runs as a reviewer looks for them: those waiting on
// people, those running, those finished; each group newest first (the
// order List gives).
type listView struct {
	Waiting, Running, Finished []listEntry
}

func listPage(ctx context.Context, rd Reader, list []engine.RunSummary) listView {
	states := terminal.RunStates(ctx, rd, list, false, false)
	var v listView
	for i, s := range list {
		e := listEntry{RunSummary: s, State: states[i]}
		switch s.State {
		case engine.RunWaiting:
			v.Waiting = append(v.Waiting, e)
		case engine.RunRunning:
			v.Running = append(v.Running, e)
		default:
			v.Finished = append(v.Finished, e)
		}
	}
	return v
}

// offerForms adds the forms a person may send: each waiting step's
// decisions (the engine's list of what it takes now), and pause or resume
// as the run's header in Slack offers them. Whether a form's decision is
// still possible when it arrives is the engine's to say then.
func offerForms(v *runView, csrf string) error {
	r := v.Run
	key := func() (string, error) {
		k, err := secret()
		return "web:" + k, err
	}
	var err error
	switch {
	case r.Finished():
	case !r.Paused && r.State == engine.RunRunning:
		v.Pause = &formKeys{CSRF: csrf}
		v.Pause.Key, err = key()
	case r.PausedByPerson():
		v.Resume = &formKeys{CSRF: csrf}
		v.Resume.Key, err = key()
	}
	if err != nil {
		return err
	}
	for i := range v.Steps {
		sv := &v.Steps[i]
		st := r.Step(sv.N)
		kinds := engine.Allowed(st)
		if len(kinds) == 0 {
			continue
		}
		o := &offer{Run: r.ID, Step: st.N, CSRF: csrf, Keys: map[string]string{}}
		if l := st.Latest(); l != nil {
			o.Attempt = l.N
		}
		if o.Attempt == 0 {
			continue
		}
		for _, k := range kinds {
			if o.Keys[string(k)], err = key(); err != nil {
				return err
			}
		}
		o.Current = sv.raw(o.Attempt)
		o.Picking = engine.Picking(st)
		if err := offerPicks(sv.Round, st, csrf, key); err != nil {
			return err
		}
		sv.Offer = o
	}
	return nil
}

// runView is one run's page.
type runView struct {
	Run    *engine.Run
	Stand  engine.Stand
	Detail string // where the run stands, in gonogo show's words
	Steps  []stepView
	Events []eventView
	// Said is the one-line result of the session's last form.
	Said string
	// Pause and Resume are the run-wide forms offered, nil when not.
	Pause, Resume *formKeys
}

// formKeys are what every form carries: the session's CSRF token and a
// key made when the page was, so a form sent twice decides once.
type formKeys struct {
	CSRF string
	Key  string
}

// offer is the decisions a waiting step takes, as forms: one key each.
type offer struct {
	Run     engine.RunID
	Step    int
	Attempt int
	CSRF    string
	Keys    map[string]string
	Current string // the latest artifact, for the edit form
	// Picking says the step waits for a pick among its candidates.
	Picking bool
}

type stepView struct {
	N         int
	Title     string
	Status    engine.StepStatus
	Attempts  []attemptView
	Decisions []engine.Decision
	// Diff is the last two attempts with an artifact, 0 when there are
	// not two.
	DiffA, DiffB int
	Offer        *offer
	// Round is the step's latest best-of round, whose attempts are not
	// in Attempts; nil when the step has none.
	Round *roundView
}

// raw is the text of attempt n's artifact, "" when it has none read.
func (sv *stepView) raw(n int) string {
	for _, a := range sv.Attempts {
		if a.N == n {
			return a.Raw
		}
	}
	if sv.Round != nil {
		for _, c := range sv.Round.Candidates {
			if c.N == n {
				return c.Raw
			}
		}
	}
	return ""
}

type attemptView struct {
	engine.Attempt
	Result   string
	Rendered template.HTML
	Raw      string
	Unread   string // why the artifact could not be read
}

type eventView struct {
	engine.Event
	Detail string
}

// runPage reads each attempt's artifact for the page.
func runPage(ctx context.Context, rd Reader, r *engine.Run, journal []engine.Event) runView {
	_, detail := terminal.RunState(r)
	v := runView{Run: r, Stand: engine.StandingOf(r).Stand, Detail: detail}
	for i := range r.Steps {
		st := &r.Steps[i]
		sv := stepView{N: st.N, Title: terminal.StepTitle(r, st), Status: st.Status, Decisions: st.Decisions}
		var with []int
		for _, a := range st.Attempts {
			av := attemptView{Attempt: a}
			if a.Result != "" {
				av.Result = engine.ResultText(a.Result, a.Reason)
			}
			if a.Artifact {
				body, err := rd.Artifact(ctx, r.ID, st.N, a.N)
				if err != nil {
					// One unreadable artifact leaves the rest of the run
					// worth reading.
					av.Unread = err.Error()
				} else {
					av.Rendered, av.Raw = renderMarkdown(body), string(body)
					with = append(with, a.N)
				}
			}
			sv.Attempts = append(sv.Attempts, av)
		}
		// A round's candidates are compared among themselves, not as
		// the step's last two attempts.
		if sv.Round, sv.Attempts = roundOf(r.ID, st, sv.Attempts); sv.Round == nil && len(with) >= 2 {
			sv.DiffA, sv.DiffB = with[len(with)-2], with[len(with)-1]
		}
		v.Steps = append(v.Steps, sv)
	}
	for _, ev := range journal {
		v.Events = append(v.Events, eventView{Event: ev, Detail: terminal.EventDetail(r, ev)})
	}
	return v
}
