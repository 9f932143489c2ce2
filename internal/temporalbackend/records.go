package temporalbackend

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// What crosses Temporal (workflow input, activity input and result, update
// arguments and results, query results) is these records, each with a
// version V, so that a workflow recorded by one release replays under the
// next and a record from a newer gonogo is refused instead of misread.
// Engine structs never cross as they are: events and runs use package
// record's encoding, embedded as JSON. The records carry record.Version
// and are read through record.CheckVersion, as the store's are.

// startRecord is a run workflow's input: the run's first events, made by
// the caller (the run id and the clock are inputs), and how its steps are
// dispatched.
type startRecord struct {
	V      int             `json:"v"`
	Events json.RawMessage `json:"events"`
	// StepQueue is the task queue of the step activity; StepTimeoutNS the
	// limit of a step that sets none; HeartbeatNS how long a silent
	// worker is trusted before its step counts as interrupted.
	StepQueue     string `json:"step_queue"`
	StepTimeoutNS int64  `json:"step_timeout_ns"`
	HeartbeatNS   int64  `json:"heartbeat_ns"`
	// HistoryLimit is how many history events a workflow holds before it
	// continues as new (0: when Temporal suggests it).
	HistoryLimit int `json:"history_limit,omitempty"`
	// Keys are the current artifact keys, when the workflow continues a
	// run as new: Events are then the run's whole journal. Edits are the
	// keys of every edit of each attempt, in order (see runView.Edits).
	Keys  map[string]string   `json:"keys,omitempty"`
	Edits map[string][]string `json:"edits,omitempty"`
	// SlackQueue is the task queue of the thread sync activity of a run
	// with a Slack thread ("": no syncs); Notes are the run's notes, when
	// the workflow continues a run as new.
	SlackQueue string            `json:"slack_queue,omitempty"`
	Notes      map[string]string `json:"notes,omitempty"`
	// Slots is the id of the slots workflow a step asks for a slot
	// before it starts, and MaxSteps the run's limit on the steps that
	// hold one at once across the cluster ("", 0: no limit; slots.go).
	Slots    string `json:"slots,omitempty"`
	MaxSteps int    `json:"max_steps,omitempty"`
}

// endRecord is what a run workflow returns when the run is over.
type endRecord struct {
	V     int    `json:"v"`
	State string `json:"state"`
}

// stepRecord is the step activity's input: the run as the attempt
// started, the attempt, and the current artifact keys it may read.
type stepRecord struct {
	V       int               `json:"v"`
	Run     json.RawMessage   `json:"run"`
	Step    int               `json:"step"`
	Attempt int               `json:"attempt"`
	Keys    map[string]string `json:"keys,omitempty"`
}

type usageRecord struct {
	In          int64 `json:"in,omitempty"`
	Out         int64 `json:"out,omitempty"`
	CacheRead   int64 `json:"cache_read,omitempty"`
	CacheCreate int64 `json:"cache_create,omitempty"`
	Turns       int   `json:"turns,omitempty"`
}

func toUsage(u engine.Usage) usageRecord {
	return usageRecord{In: u.InputTokens, Out: u.OutputTokens, CacheRead: u.CacheRead, CacheCreate: u.CacheCreate, Turns: u.Turns}
}

func (u usageRecord) usage() engine.Usage {
	return engine.Usage{InputTokens: u.In, OutputTokens: u.Out, CacheRead: u.CacheRead, CacheCreate: u.CacheCreate, Turns: u.Turns}
}

// verdictRecord is the step activity's result: the engine.Finished to
// record with engine.Finish, and the key its artifact was put under.
// Stopped says the attempt was cancelled through Temporal (a person's
// cancel, an abort): the activity cannot know why, so the workflow judges
// it with its own cause from Outcome.
type verdictRecord struct {
	V         int             `json:"v"`
	Stopped   bool            `json:"stopped,omitempty"`
	Result    string          `json:"result,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Summary   string          `json:"summary,omitempty"`
	Artifact  bool            `json:"artifact,omitempty"`
	Size      int             `json:"size,omitempty"`
	File      string          `json:"file,omitempty"`
	CostUSD   float64         `json:"cost_usd,omitempty"`
	Usage     usageRecord     `json:"usage,omitzero"`
	Added     json.RawMessage `json:"added,omitempty"` // a steps-added event, in package record's encoding
	Cancelled bool            `json:"cancelled,omitempty"`
	ErrorKind string          `json:"error_kind,omitempty"`
	WaitNS    int64           `json:"rate_limit_wait_ns,omitempty"`
	Tries     int             `json:"rate_limit_tries,omitempty"`
	Key       string          `json:"key,omitempty"`
	Outcome   *outcomeRecord  `json:"outcome,omitempty"`
	// Agent is the agent the worker ran the attempt on (a stopped one
	// too); absent from verdicts of older workers.
	Agent string `json:"agent,omitempty"`
}

// outcomeRecord is what a stopped attempt's runner brought back, for the
// workflow to judge (its artifact is not kept: a stopped attempt fails).
type outcomeRecord struct {
	Err        string      `json:"err,omitempty"`
	ExitCode   int         `json:"exit_code,omitempty"`
	AgentError string      `json:"agent_error,omitempty"`
	ErrorKind  string      `json:"error_kind,omitempty"`
	Stderr     string      `json:"stderr,omitempty"`
	CostUSD    float64     `json:"cost_usd,omitempty"`
	Usage      usageRecord `json:"usage,omitzero"`
}

func toVerdict(f engine.Finished, key string) (verdictRecord, error) {
	v := verdictRecord{
		V: record.Version, Result: string(f.Result), Reason: f.Reason, Summary: f.Summary, Artifact: f.Artifact,
		Size: f.Size, File: f.File, CostUSD: f.CostUSD, Usage: toUsage(f.Usage), Cancelled: f.Cancelled,
		ErrorKind: string(f.ErrorKind), WaitNS: int64(f.RateLimit.Wait), Tries: f.RateLimit.Tries, Key: key,
		Agent: f.Agent,
	}
	if len(f.Added) > 0 {
		b, err := record.MarshalEvents([]engine.Event{{Type: engine.EvStepsAdded, Added: f.Added}})
		if err != nil {
			return v, err
		}
		v.Added = b
	}
	return v, nil
}

func (v verdictRecord) finished() (engine.Finished, error) {
	if err := record.CheckVersion(v.V); err != nil {
		return engine.Finished{}, err
	}
	res, err := engine.ParseResult(v.Result)
	if err != nil {
		return engine.Finished{}, err
	}
	kind, err := parseOptional(v.ErrorKind, engine.ParseAgentErrorKind)
	if err != nil {
		return engine.Finished{}, err
	}
	f := engine.Finished{
		Result: res, Reason: v.Reason, Summary: v.Summary, Artifact: v.Artifact, Size: v.Size, File: v.File,
		CostUSD: v.CostUSD, Usage: v.Usage.usage(), Cancelled: v.Cancelled, ErrorKind: kind,
		RateLimit: engine.RateLimit{Wait: time.Duration(v.WaitNS), Tries: v.Tries}, Agent: v.Agent,
	}
	if len(v.Added) > 0 {
		evs, err := record.UnmarshalEvents(v.Added)
		if err != nil {
			return f, err
		}
		for _, ev := range evs {
			f.Added = append(f.Added, ev.Added...)
		}
	}
	return f, nil
}

func toOutcomeRecord(o engine.Outcome) *outcomeRecord {
	rec := &outcomeRecord{ExitCode: o.ExitCode, AgentError: o.AgentError, ErrorKind: string(o.AgentErrorKind),
		Stderr: o.Stderr, CostUSD: o.CostUSD, Usage: toUsage(o.Usage)}
	if o.Err != nil {
		rec.Err = o.Err.Error()
	}
	return rec
}

func (o *outcomeRecord) outcome() engine.Outcome {
	if o == nil {
		return engine.Outcome{}
	}
	kind, _ := parseOptional(o.ErrorKind, engine.ParseAgentErrorKind)
	out := engine.Outcome{ExitCode: o.ExitCode, AgentError: o.AgentError, AgentErrorKind: kind, Stderr: o.Stderr,
		CostUSD: o.CostUSD, Usage: o.Usage.usage()}
	if o.Err != "" {
		out.Err = errors.New(o.Err)
	}
	return out
}

func parseOptional[T ~string](s string, parse func(string) (T, error)) (T, error) {
	if s == "" {
		return "", nil
	}
	return parse(s)
}

// memberRecord is what the caller's front end says of the person acting
// (engine.Members): the workflow cannot ask Slack who is in a group.
type memberRecord struct {
	Operator bool     `json:"operator,omitempty"`
	Outsider bool     `json:"outsider,omitempty"`
	Groups   []string `json:"groups,omitempty"`
}

func (m memberRecord) member() engine.Member {
	return engine.Member{Operator: m.Operator, Outsider: m.Outsider, Groups: m.Groups}
}

// actRecord is the argument of every update: who acts, what the front end
// says of them, and what they ask. Nonce is the caller's own, returned in
// the result, so that a caller whose update id was applied already (by an
// earlier call) can tell and answer engine.ErrDuplicate as bbolt does.
type actRecord struct {
	V      int          `json:"v"`
	Nonce  string       `json:"nonce"`
	Actor  string       `json:"actor"`
	Member memberRecord `json:"member,omitzero"`
	// For decide; Step and Attempt for cancel too.
	Kind    string `json:"kind,omitempty"`
	Step    int    `json:"step,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	// Candidate is the best-of candidate a pick names (its attempt is
	// Attempt), which the engine checks against the round.
	Candidate int         `json:"candidate,omitempty"`
	Key       string      `json:"key,omitempty"`
	Feedback  string      `json:"feedback,omitempty"`
	Time      time.Time   `json:"time,omitzero"`
	Edit      *editRecord `json:"edit,omitempty"`
	// For unpause and set-mode.
	Mode string `json:"mode,omitempty"`
	// For change-setup: a setup-changed event carrying the setup, in
	// package record's encoding.
	Setup json.RawMessage `json:"setup,omitempty"`
}

// editRecord is an edit's replacement artifact, put into the
// ArtifactStore by the caller before the update.
type editRecord struct {
	Key     string `json:"key"`
	Size    int    `json:"size"`
	Summary string `json:"summary,omitempty"`
}

func (a actRecord) decision() (engine.Decision, error) {
	kind, err := engine.ParseDecisionKind(a.Kind)
	if err != nil {
		return engine.Decision{}, err
	}
	return engine.Decision{Kind: kind, Actor: a.Actor, Time: a.Time, Step: a.Step, Attempt: a.Attempt, Candidate: a.Candidate,
		Key: a.Key, Feedback: a.Feedback}, nil
}

// runView is an update's result and the run query's: the run in package
// record's wire encoding, the current artifact key of every attempt that has one,
// and for an update the caller's nonce.
//
// Edits holds, by the same refKey as Keys, the store key of every edit of
// an attempt in the order the edits were recorded (each decide update's
// edit.key, as its argument carries it), so that the audit trail reads
// every version; Keys still names only the current one. A workflow that
// continued as new under a release without it has none for the edits
// recorded before.
type runView struct {
	V     int                 `json:"v"`
	Nonce string              `json:"nonce,omitempty"`
	Run   json.RawMessage     `json:"run"`
	Keys  map[string]string   `json:"keys,omitempty"`
	Edits map[string][]string `json:"edits,omitempty"`
}

func (v runView) run() (*engine.Run, error) {
	if err := record.CheckVersion(v.V); err != nil {
		return nil, err
	}
	r, _, err := record.UnmarshalRun(v.Run)
	return r, err
}

// journalPage is one page of the journal query: events from a seq on, and
// the seq the next page starts at (0 when this was the last).
type journalPage struct {
	V      int             `json:"v"`
	Events json.RawMessage `json:"events"`
	Next   uint64          `json:"next,omitempty"`
}

// notesRecord is the notes query's result (the run's notes) and the
// set-notes update's argument (the notes to merge in; an empty value
// deletes its key).
type notesRecord struct {
	V     int               `json:"v"`
	Notes map[string]string `json:"notes,omitempty"`
}

// syncRecord is the thread sync activity's input: which run's thread to
// bring up to date. Where the thread is, the front end keeps in the run's
// notes.
type syncRecord struct {
	V   int    `json:"v"`
	Run string `json:"run"`
	// Retried says the run's previous sync gave up: this one looks in
	// Slack for what that one may have posted first.
	Retried bool `json:"retried,omitempty"`
}

// syncedRecord is the thread sync activity's result: LaterNS > 0 asks for
// another sync after that long; Done says the thread shows the finished
// run in full.
type syncedRecord struct {
	V       int   `json:"v"`
	LaterNS int64 `json:"later_ns,omitempty"`
	Done    bool  `json:"done,omitempty"`
}
