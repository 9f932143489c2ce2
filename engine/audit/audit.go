package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/gonogo/gonogo/engine"
)

// Version is the version of the JSON shape, written as "gonogo_audit".
// It changes only when a field changes meaning or goes away; fields may be
// added within a version.
const Version = 1

// Source is what a trail is built from. Versions returns every version of
// an attempt's artifact, the agent's original first and then each edit in
// order (engine.ErrNotFound, or an empty list, when none is stored).
//
// Gone reports whether an artifact file (a path relative to the data
// directory, as engine.Attempt.File) is gone from disk, deleted or moved
// since gonogo wrote it; nil checks no file. The store keeps the bytes
// either way: the trail says the file is gone, not the artifact.
type Source struct {
	Run      *engine.Run
	Journal  []engine.Event
	Versions func(step, attempt int) ([][]byte, error)
	Gone     func(file string) bool
}

// Trail is a run's audit trail. Its JSON form is documented in the README.
type Trail struct {
	Version   int       `json:"gonogo_audit"`
	Generated time.Time `json:"generated"`
	Run       Run       `json:"run"`
	Steps     []Step    `json:"steps"`
	NotRun    []NotRun  `json:"not_run"`
	Journal   []Event   `json:"journal"`
}

// Run is the run as a whole.
type Run struct {
	ID        string     `json:"id"`
	State     string     `json:"state"`
	Input     string     `json:"input"`
	Source    string     `json:"source"`
	Mode      string     `json:"mode"`
	StartedBy string     `json:"started_by"`
	Channel   string     `json:"channel,omitempty"`
	Thread    string     `json:"thread,omitempty"`
	Created   time.Time  `json:"created"`
	Updated   time.Time  `json:"updated"`
	Finished  *time.Time `json:"finished"`
	CostUSD   float64    `json:"cost_usd"`
	BudgetUSD float64    `json:"budget_usd,omitempty"`
	Quorum    int        `json:"quorum"`
	Runner    string     `json:"runner,omitempty"`
	Agent     string     `json:"agent,omitempty"`
	Warnings  []string   `json:"warnings"`
}

// Step is one step and every attempt at it.
type Step struct {
	N        int       `json:"n"`
	ID       string    `json:"id,omitempty"`
	Skill    string    `json:"skill"`
	Effort   string    `json:"effort,omitempty"`
	Parent   int       `json:"parent,omitempty"`
	Status   string    `json:"status"`
	Result   *string   `json:"result"`
	Decision *string   `json:"decision"`
	CostUSD  float64   `json:"cost_usd"`
	Attempts []Attempt `json:"attempts"`

	decidedBy string // who made Decision: no one for auto
	picked    int    // the candidate Decision picked, for a pick
}

// Attempt is one execution of a step, what it produced, and what people
// decided on it.
type Attempt struct {
	N     int    `json:"n"`
	Skill string `json:"skill"`
	// Runner and Candidate are a best-of step's candidate's: the runner
	// it ran on and its number in its round; Picked says it was taken as
	// the step's artifact.
	Runner          string     `json:"runner,omitempty"`
	Candidate       int        `json:"candidate,omitempty"`
	Picked          bool       `json:"picked,omitempty"`
	Result          string     `json:"result"`
	Reason          string     `json:"reason,omitempty"`
	ErrorKind       string     `json:"error_kind,omitempty"`
	Feedback        string     `json:"feedback,omitempty"`
	Started         *time.Time `json:"started"`
	Finished        *time.Time `json:"finished"`
	DurationSeconds float64    `json:"duration_seconds"`
	CostUSD         float64    `json:"cost_usd"`
	Usage           Usage      `json:"usage"`
	Artifact        *Artifact  `json:"artifact"`
	Edits           []Edit     `json:"edits"`
	Decisions       []Decision `json:"decisions"`
}

// Usage is the agent's token usage for an attempt.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	CacheRead    int64 `json:"cache_read_tokens"`
	CacheCreate  int64 `json:"cache_creation_tokens"`
	Turns        int   `json:"turns"`
}

// Artifact is what the agent produced: the sum and size of its own
// artifact, and where the attempt's current version (the last edit, if it
// was edited) is on disk, relative to the data directory.
type Artifact struct {
	SHA256 string `json:"sha256"`
	Size   int    `json:"size"`
	File   string `json:"file,omitempty"`
	// FileGone says File is no longer on disk when the trail was
	// written; the store still has the artifact.
	FileGone bool `json:"file_gone,omitempty"`
}

// Edit is a person's replacement of an attempt's artifact, as a unified
// diff against the agent's own artifact.
type Edit struct {
	Actor  string    `json:"actor"`
	Time   time.Time `json:"time"`
	SHA256 string    `json:"sha256"`
	Size   int       `json:"size"`
	Diff   string    `json:"diff"`
}

// Decision is one decision on an attempt.
type Decision struct {
	Kind     string    `json:"kind"`
	Actor    string    `json:"actor"`
	Time     time.Time `json:"time"`
	Key      string    `json:"key,omitempty"`
	Feedback string    `json:"feedback,omitempty"` // a redo's feedback, a pick's note
	// Candidate is the candidate a pick took.
	Candidate int `json:"candidate,omitempty"`
}

// NotRun is a block of a plan that was shown but never run: manual, or
// deferred past the first runnable blocks.
type NotRun struct {
	Kind   string `json:"kind"` // manual or deferred
	Effort string `json:"effort"`
	Skill  string `json:"skill,omitempty"`
	Reason string `json:"reason,omitempty"`
	Line   int    `json:"line,omitempty"`
}

// Event is one journal entry, in the shape gonogo show --json prints it.
type Event struct {
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	Type     string    `json:"type"`
	Step     int       `json:"step,omitempty"`
	Attempt  int       `json:"attempt,omitempty"`
	Actor    string    `json:"actor,omitempty"`
	Kind     string    `json:"kind,omitempty"` // a decision's kind
	Key      string    `json:"key,omitempty"`
	Feedback string    `json:"feedback,omitempty"`
	// Runner and Candidate: a best-of candidate's start says its runner
	// and number; a pick, the number of the candidate it took.
	Runner    string `json:"runner,omitempty"`
	Candidate int    `json:"candidate,omitempty"`
	// Agent is a step-finished event's: the agent that ran the attempt,
	// as gonogo stats names it. Absent from older events.
	Agent   string  `json:"agent,omitempty"`
	Status  string  `json:"status,omitempty"`
	Result  string  `json:"result,omitempty"`
	Reason  string  `json:"reason,omitempty"`
	CostUSD float64 `json:"cost_usd,omitempty"`
	Mode    string  `json:"mode,omitempty"`
	State   string  `json:"state,omitempty"`
	// Changes are a setup-changed event's: what resume changed in how the
	// run is carried out.
	Changes []Change `json:"changes,omitempty"`
	// Lost is a step-interrupted event's: when its attempt was lost as
	// far as gonogo knows (its last sign of life), where Time is when the
	// next gonogo found it lost. Absent from older events.
	Lost *time.Time `json:"lost,omitempty"`
}

// Change is one field of a run's setup changed on resume.
type Change struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// Journal is a run's journal in the shape of Event.
func Journal(journal []engine.Event) []Event {
	out := make([]Event, 0, len(journal))
	for _, ev := range journal {
		e := Event{Seq: ev.Seq, Time: ev.Time, Type: string(ev.Type), Step: ev.Step, Attempt: ev.Attempt, Actor: ev.Actor,
			Kind: string(ev.Decision), Key: ev.Key, Feedback: ev.Feedback, Status: string(ev.Status), Result: string(ev.Result),
			Reason: ev.Reason, CostUSD: ev.CostUSD, Mode: string(ev.Mode), State: string(ev.State),
			Runner: ev.Runner, Candidate: ev.Candidate, Agent: ev.Agent}
		for _, c := range ev.Changes {
			e.Changes = append(e.Changes, Change(c))
		}
		if !ev.Lost.IsZero() {
			lost := ev.Lost
			e.Lost = &lost
		}
		out = append(out, e)
	}
	return out
}

// Build makes the trail of src.Run as it stands; now is when it is written.
func Build(src Source, now time.Time) (Trail, error) {
	r := src.Run
	t := Trail{Version: Version, Generated: now.UTC(), Run: runOf(r, src.Journal),
		Steps: make([]Step, 0, len(r.Steps)), NotRun: notRun(r.Plan), Journal: Journal(src.Journal)}
	h := historyOf(src.Journal)
	for i := range r.Steps {
		st, err := stepOf(&r.Steps[i], h, src)
		if err != nil {
			return Trail{}, err
		}
		t.Steps = append(t.Steps, st)
	}
	return t, nil
}

func runOf(r *engine.Run, journal []engine.Event) Run {
	out := Run{ID: string(r.ID), State: string(r.State), Input: string(r.Input), Source: r.Plan.Source,
		Mode: engine.RunModeName(r.Mode, r.DryRun), StartedBy: r.StartedBy, Channel: r.Origin.Channel,
		Thread: r.Origin.Thread, Created: r.Created.UTC(), Updated: r.Updated.UTC(), CostUSD: r.CostUSD,
		BudgetUSD: r.BudgetUSD, Quorum: max(r.Quorum, 1), Warnings: r.Plan.Warnings}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	if r.Setup != nil {
		out.Runner, out.Agent = r.Setup.Runner, r.Setup.RunnerCmd
	}
	for _, ev := range journal {
		if ev.Type == engine.EvRunFinished {
			at := ev.Time.UTC()
			out.Finished = &at
		}
	}
	return out
}

func notRun(p engine.Plan) []NotRun {
	out := []NotRun{}
	for _, b := range p.Manual {
		out = append(out, NotRun{Kind: "manual", Effort: b.Effort, Skill: b.Skill, Reason: b.Reason, Line: b.Line})
	}
	for _, b := range p.Deferred {
		out = append(out, NotRun{Kind: "deferred", Effort: b.Effort, Skill: b.Skill, Reason: b.Reason, Line: b.Line})
	}
	return out
}

type attemptKey struct{ step, attempt int }

// history is what the journal says of each attempt's artifact versions:
// whether the agent's output was stored (the attempt's step-finished
// event), and the edits in journal order, which is the order of the
// versions they stored after it.
type history struct {
	agent map[attemptKey]bool
	edits map[attemptKey][]engine.Event
}

func historyOf(journal []engine.Event) history {
	h := history{agent: map[attemptKey]bool{}, edits: map[attemptKey][]engine.Event{}}
	for _, ev := range journal {
		k := attemptKey{ev.Step, ev.Attempt}
		switch {
		case ev.Type == engine.EvStepFinished && ev.Artifact:
			h.agent[k] = true
		case ev.Type == engine.EvDecision && ev.Decision == engine.DecideEdit:
			h.edits[k] = append(h.edits[k], ev)
		}
	}
	return h
}

func stepOf(s *engine.Step, h history, src Source) (Step, error) {
	out := Step{N: s.N, ID: s.ID, Skill: s.Skill, Effort: s.Effort, Parent: s.Parent, Status: string(s.Status),
		Attempts: make([]Attempt, 0, len(s.Attempts))}
	if l := s.Latest(); l != nil && l.Result != "" {
		res := string(l.Result)
		out.Result = &res
	}
	if d := engine.StepDecision(s); d != nil {
		k := string(d.Kind)
		out.Decision, out.decidedBy, out.picked = &k, d.Actor, d.Candidate
	}
	for i := range s.Attempts {
		a := &s.Attempts[i]
		at := attemptOf(s, a)
		out.CostUSD += a.CostUSD
		if a.Artifact {
			vs, err := src.Versions(s.N, a.N)
			if err != nil {
				return Step{}, fmt.Errorf("step %d attempt %d: read its artifact: %w", s.N, a.N, err)
			}
			k := attemptKey{s.N, a.N}
			at.Artifact, at.Edits = artifactOf(a, vs, h.agent[k], h.edits[k])
			if art := at.Artifact; art != nil && art.File != "" && src.Gone != nil {
				art.FileGone = src.Gone(art.File)
			}
		}
		out.Attempts = append(out.Attempts, at)
	}
	return out, nil
}

func attemptOf(s *engine.Step, a *engine.Attempt) Attempt {
	out := Attempt{N: a.N, Skill: engine.AttemptSkill(s, a), Runner: a.Runner, Candidate: a.Candidate, Picked: a.Picked,
		Result: string(a.Result), Reason: a.Reason,
		ErrorKind: string(a.ErrorKind), Feedback: a.Feedback, CostUSD: a.CostUSD,
		Usage: Usage{InputTokens: a.Usage.InputTokens, OutputTokens: a.Usage.OutputTokens,
			CacheRead: a.Usage.CacheRead, CacheCreate: a.Usage.CacheCreate, Turns: a.Usage.Turns},
		Edits: []Edit{}, Decisions: []Decision{}}
	if !a.Started.IsZero() {
		t := a.Started.UTC()
		out.Started = &t
	}
	if !a.Finished.IsZero() {
		t := a.Finished.UTC()
		out.Finished = &t
	}
	if out.Started != nil && out.Finished != nil {
		out.DurationSeconds = a.Finished.Sub(a.Started).Seconds()
	}
	for _, d := range s.Decisions {
		if d.Attempt == a.N {
			out.Decisions = append(out.Decisions, Decision{Kind: string(d.Kind), Actor: d.Actor, Time: d.Time.UTC(),
				Key: d.Key, Feedback: d.Feedback, Candidate: d.Candidate})
		}
	}
	return out
}

// artifactOf describes an attempt's artifact from its stored versions:
// the agent's original (its sum and size; nil when the agent produced
// none and a person's edit is the first version) and each edit as a diff
// against it. An edit whose version is missing from the store is still
// listed, with who and when, and says so in place of its diff.
func artifactOf(a *engine.Attempt, vs [][]byte, agentStored bool, edits []engine.Event) (*Artifact, []Edit) {
	out := []Edit{}
	var art *Artifact
	var orig []byte
	from := "agent"
	if agentStored && len(vs) > 0 {
		orig, vs = vs[0], vs[1:]
		art = &Artifact{SHA256: sum(orig), Size: len(orig), File: a.File}
	} else {
		from = "agent (no artifact)"
	}
	for i, ev := range edits {
		e := Edit{Actor: ev.Actor, Time: ev.Time.UTC()}
		if i < len(vs) {
			body := vs[i]
			e.SHA256, e.Size = sum(body), len(body)
			e.Diff = udiff.Unified(from, "edited by "+ev.Actor, string(orig), string(body))
		} else {
			e.Diff = "(this version is not in the store)"
		}
		out = append(out, e)
	}
	return art, out
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
