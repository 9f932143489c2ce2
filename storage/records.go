package storage

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// recordVersion is the version every record is written with. A reader
// refuses a record from a newer gonogo rather than guess at its fields.
const recordVersion = 1

// Slices are encoded without omitempty so that nil and empty survive a round
// trip: what Load returns is what was committed.

type runRecord struct {
	V         int          `json:"v"`
	ID        string       `json:"id"`
	State     string       `json:"state"`
	Input     string       `json:"input"`
	Mode      string       `json:"mode"`
	DryRun    bool         `json:"dry_run,omitempty"`
	Thread    bool         `json:"thread,omitempty"`
	ForceAuto bool         `json:"force_auto,omitempty"`
	BudgetUSD float64      `json:"budget_usd,omitempty"`
	Quorum    int          `json:"quorum,omitempty"`
	ExclStart bool         `json:"exclude_starter,omitempty"`
	Steps     []stepRecord `json:"steps"`
	StartedBy string       `json:"started_by,omitempty"`
	Origin    originRecord `json:"origin,omitzero"`
	Created   time.Time    `json:"created,omitzero"`
	Updated   time.Time    `json:"updated,omitzero"`
	CostUSD   float64      `json:"cost_usd,omitempty"`
	Seq       uint64       `json:"seq"`
	Halt      string       `json:"halt,omitempty"`
	// The pause fields are absent from runs recorded before runs could be
	// paused; they decode as a run that is not.
	Paused      bool      `json:"paused,omitempty"`
	PausedBy    string    `json:"paused_by,omitempty"`
	PauseReason string    `json:"pause_reason,omitempty"`
	PausedAt    time.Time `json:"paused_at,omitzero"`
	// Setup is absent from runs recorded before setups were kept; they
	// decode with none.
	Setup *setupRecord `json:"setup,omitempty"`
	// Oversight is absent from runs recorded before runs kept it; they
	// decode with none.
	Oversight *oversightRecord `json:"oversight,omitempty"`
}

// oversightRecord is who may decide a run and its checkpoints' deadlines
// (engine.Oversight).
type oversightRecord struct {
	Approvers         []string `json:"approvers"`
	RemindAfterNS     int64    `json:"remind_after_ns,omitempty"`
	DecisionTimeoutNS int64    `json:"decision_timeout_ns,omitempty"`
	OnTimeout         string   `json:"on_timeout,omitempty"`
}

// setupRecord is how a run's steps are carried out (engine.Setup).
type setupRecord struct {
	Runner     string   `json:"runner,omitempty"`
	RunnerCmd  string   `json:"runner_cmd,omitempty"`
	RunnerArgs []string `json:"runner_args"`
	Skills     []string `json:"skills"`
	Workflows  string   `json:"workflows,omitempty"`
	Policy     string   `json:"policy,omitempty"`
}

type setupChangeRecord struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

type originRecord struct {
	Channel string `json:"channel,omitempty"`
	Thread  string `json:"thread,omitempty"`
}

// stepRecord leaves out the fields a step copies from its plan step when
// they are the same (FromPlan), which they are for every run the engine
// starts: the prompts are most of a run's size, and the plan is stored once.
type stepRecord struct {
	N          int              `json:"n"`
	FromPlan   bool             `json:"from_plan,omitempty"`
	ID         string           `json:"id,omitempty"`
	Skill      string           `json:"skill,omitempty"`
	Effort     string           `json:"effort,omitempty"`
	Prompt     string           `json:"prompt,omitempty"`
	Category   string           `json:"category,omitempty"`
	Execution  string           `json:"execution,omitempty"`
	Leaf       string           `json:"leaf,omitempty"`
	DependsOn  []int            `json:"depends_on"`
	ThreadFrom int              `json:"thread_from,omitempty"`
	Gate       string           `json:"gate,omitempty"`
	Rules      *rulesRecord     `json:"rules,omitempty"`
	Parent     int              `json:"parent,omitempty"`
	Using      string           `json:"using,omitempty"`
	Held       bool             `json:"held,omitempty"`
	Status     string           `json:"status"`
	Attempts   []attemptRecord  `json:"attempts"`
	Decisions  []decisionRecord `json:"decisions"`
}

type attemptRecord struct {
	N        int    `json:"n"`
	Skill    string `json:"skill,omitempty"`
	Result   string `json:"result,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Summary  string `json:"summary,omitempty"`
	Feedback string `json:"feedback,omitempty"`
	Artifact bool   `json:"artifact,omitempty"`
	Edited   bool   `json:"edited,omitempty"`
	Final    bool   `json:"final,omitempty"`
	// Absent from attempts recorded before agent errors had kinds.
	ErrorKind string      `json:"error_kind,omitempty"`
	RetryAt   time.Time   `json:"retry_at,omitzero"`
	Retries   int         `json:"retries,omitempty"`
	Size      int         `json:"size,omitempty"`
	File      string      `json:"file,omitempty"`
	CostUSD   float64     `json:"cost_usd,omitempty"`
	Usage     usageRecord `json:"usage,omitzero"`
	Started   time.Time   `json:"started,omitzero"`
	Finished  time.Time   `json:"finished,omitzero"`

	// Absent from attempts recorded before checkpoints had deadlines.
	Reminded time.Time `json:"reminded,omitzero"`
	TimedOut time.Time `json:"timed_out,omitzero"`
}

type usageRecord struct {
	InputTokens  int64 `json:"in,omitempty"`
	OutputTokens int64 `json:"out,omitempty"`
	CacheRead    int64 `json:"cache_read,omitempty"`
	CacheCreate  int64 `json:"cache_create,omitempty"`
	Turns        int   `json:"turns,omitempty"`
}

type decisionRecord struct {
	Kind     string    `json:"kind"`
	Actor    string    `json:"actor,omitempty"`
	Time     time.Time `json:"time,omitzero"`
	Step     int       `json:"step"`
	Attempt  int       `json:"attempt"`
	Key      string    `json:"key,omitempty"`
	Feedback string    `json:"feedback,omitempty"`
}

type planRecord struct {
	V                int               `json:"v"`
	Input            string            `json:"input"`
	Source           string            `json:"source,omitempty"`
	Domain           string            `json:"domain,omitempty"`
	DomainSource     string            `json:"domain_source,omitempty"`
	DomainAmbiguous  bool              `json:"domain_ambiguous,omitempty"`
	Confidence       string            `json:"confidence,omitempty"`
	ConfidenceReason string            `json:"confidence_reason,omitempty"`
	Context          string            `json:"context,omitempty"`
	Args             map[string]string `json:"args"`
	Flags            flagsRecord       `json:"flags,omitzero"`
	Steps            []planStepRecord  `json:"steps"`
	Manual           []blockRecord     `json:"manual"`
	Deferred         []blockRecord     `json:"deferred"`
	Warnings         []string          `json:"warnings"`
}

type flagsRecord struct {
	Auto      bool `json:"auto,omitempty"`
	ForceAuto bool `json:"force_auto,omitempty"`
	DryRun    bool `json:"dry_run,omitempty"`
	Thread    bool `json:"thread,omitempty"`
}

type planStepRecord struct {
	Skill     string       `json:"skill"`
	Effort    string       `json:"effort,omitempty"`
	PTokens   []string     `json:"p_tokens"`
	Prompt    string       `json:"prompt,omitempty"`
	Category  string       `json:"category,omitempty"`
	Execution string       `json:"execution,omitempty"`
	Leaf      string       `json:"leaf,omitempty"`
	Line      int          `json:"line,omitempty"`
	ID        string       `json:"id,omitempty"`
	DependsOn []string     `json:"depends_on"`
	Gate      string       `json:"gate,omitempty"`
	Rules     *rulesRecord `json:"rules,omitempty"`
}

// rulesRecord is a workflow step's rules; nil in a record when the step
// has none (every plan and chain step).
type rulesRecord struct {
	Pre       []conditionRecord `json:"pre"`
	Post      []conditionRecord `json:"post"`
	OnError   string            `json:"on_error,omitempty"`
	Retries   int               `json:"retries,omitempty"`
	BackoffNS int64             `json:"backoff_ns,omitempty"`
	TimeoutNS int64             `json:"timeout_ns,omitempty"`
	Optional  bool              `json:"optional,omitempty"`
	Fallback  string            `json:"fallback,omitempty"`
	Options   map[string]string `json:"options"`
	Route     bool              `json:"route,omitempty"`
	Decompose string            `json:"decompose,omitempty"`
}

type conditionRecord struct {
	Kind    string   `json:"kind"`
	Path    string   `json:"path,omitempty"`
	Text    string   `json:"text,omitempty"`
	Pattern string   `json:"pattern,omitempty"`
	Field   string   `json:"field,omitempty"`
	Value   string   `json:"value,omitempty"`
	Command []string `json:"command"`
	Line    int      `json:"line,omitempty"`
}

type blockRecord struct {
	Effort  string   `json:"effort,omitempty"`
	PTokens []string `json:"p_tokens"`
	Skill   string   `json:"skill,omitempty"`
	Prompt  string   `json:"prompt,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Line    int      `json:"line,omitempty"`
}

type eventRecord struct {
	V        int         `json:"v"`
	Seq      uint64      `json:"seq"`
	Time     time.Time   `json:"time,omitzero"`
	Type     string      `json:"type"`
	Step     int         `json:"step,omitempty"`
	Attempt  int         `json:"attempt,omitempty"`
	Actor    string      `json:"actor,omitempty"`
	Decision string      `json:"decision,omitempty"`
	Key      string      `json:"key,omitempty"`
	Feedback string      `json:"feedback,omitempty"`
	Status   string      `json:"status,omitempty"`
	Result   string      `json:"result,omitempty"`
	Reason   string      `json:"reason,omitempty"`
	Summary  string      `json:"summary,omitempty"`
	Size     int         `json:"size,omitempty"`
	Artifact bool        `json:"artifact,omitempty"`
	File     string      `json:"file,omitempty"`
	CostUSD  float64     `json:"cost_usd,omitempty"`
	Usage    usageRecord `json:"usage,omitzero"`
	Skill    string      `json:"skill,omitempty"`
	Final    bool        `json:"final,omitempty"`
	// For step-finished events; absent from older records.
	ErrorKind string           `json:"error_kind,omitempty"`
	RetryAt   time.Time        `json:"retry_at,omitzero"`
	Retries   int              `json:"retries,omitempty"`
	Held      bool             `json:"held,omitempty"`
	Lost      time.Time        `json:"lost,omitzero"` // step-interrupted; absent from older records
	Added     []planStepRecord `json:"added,omitempty"`
	Mode      string           `json:"mode,omitempty"`
	State     string           `json:"state,omitempty"`
	Start     *startRecord     `json:"start,omitempty"`
	// For setup-changed events, which older records never hold.
	Setup   *setupRecord        `json:"setup,omitempty"`
	Changes []setupChangeRecord `json:"changes,omitempty"`
}

// startRecord leaves the plan out when it is the run's own copy, stored
// once in the plans bucket (PlanStored): the journal stays small, and
// appending to it does not rewrite the plan every time.
type startRecord struct {
	ID         string       `json:"id"`
	Plan       *planRecord  `json:"plan,omitempty"`
	PlanStored bool         `json:"plan_stored,omitempty"`
	Mode       string       `json:"mode"`
	DryRun     bool         `json:"dry_run,omitempty"`
	Thread     bool         `json:"thread,omitempty"`
	ForceAuto  bool         `json:"force_auto,omitempty"`
	BudgetUSD  float64      `json:"budget_usd,omitempty"`
	Quorum     int          `json:"quorum,omitempty"`
	ExclStart  bool         `json:"exclude_starter,omitempty"`
	StartedBy  string       `json:"started_by,omitempty"`
	Origin     originRecord `json:"origin,omitzero"`
	Setup      *setupRecord `json:"setup,omitempty"` // absent from runs started before setups were kept
	// Absent from runs started before runs kept it.
	Oversight *oversightRecord `json:"oversight,omitempty"`
}

type summaryRecord struct {
	V          int          `json:"v"`
	State      string       `json:"state"`
	Input      string       `json:"input"`
	Source     string       `json:"source,omitempty"`
	Origin     originRecord `json:"origin,omitzero"`
	Created    time.Time    `json:"created,omitzero"`
	Updated    time.Time    `json:"updated,omitzero"`
	StepsTotal int          `json:"steps_total"`
	StepsDone  int          `json:"steps_done"`
}

// keyRecord remembers which change an idempotency key made.
type keyRecord struct {
	V   int    `json:"v"`
	Run string `json:"run"`
	Seq uint64 `json:"seq"`
}

// fileRecord is a pending file write. Its body follows the record in the
// stored value (see frame), unless it is the body of an artifact stored in
// the same commit, which Ref names instead of storing it twice.
type fileRecord struct {
	V    int     `json:"v"`
	Run  string  `json:"run"`
	Path string  `json:"path"`
	From string  `json:"from,omitempty"`
	Ref  *artRef `json:"ref,omitempty"`
}

type artRef struct {
	Step    int `json:"step"`
	Attempt int `json:"attempt"`
	Version int `json:"version"`
}

// inboxRecord heads a request kept in the inbox; the request is the body.
type inboxRecord struct {
	V        int       `json:"v"`
	Received time.Time `json:"received,omitzero"`
}

// errNewerRecord marks a record written by a gonogo newer than this one.
var errNewerRecord = errors.New("written by a newer gonogo")

func checkVersion(v int) error {
	switch {
	case v == 0:
		return errors.New("record has no version")
	case v > recordVersion:
		return fmt.Errorf("record version %d: %w", v, errNewerRecord)
	}
	return nil
}

// frame stores a JSON header and a raw body in one value: the header's
// length (4 bytes, big-endian), the header, the body. Bodies of up to
// megabytes stay raw instead of growing by a third in base64.
func frame(header any, body []byte) ([]byte, error) {
	h, err := json.Marshal(header)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 4, 4+len(h)+len(body))
	binary.BigEndian.PutUint32(out, uint32(len(h)))
	out = append(out, h...)
	return append(out, body...), nil
}

// unframe splits a framed value, decoding the header into header. The body
// aliases v: copy it before the transaction ends.
func unframe(v []byte, header any) ([]byte, error) {
	if len(v) < 4 {
		return nil, errors.New("framed record too short")
	}
	n := binary.BigEndian.Uint32(v)
	if uint64(n) > uint64(len(v)-4) {
		return nil, errors.New("framed record header runs past its end")
	}
	if err := json.Unmarshal(v[4:4+n], header); err != nil {
		return nil, err
	}
	return v[4+n:], nil
}

// Encoding: engine values to records.

func toSetupRecord(s *engine.Setup) *setupRecord {
	if s == nil {
		return nil
	}
	return &setupRecord{Runner: s.Runner, RunnerCmd: s.RunnerCmd, RunnerArgs: s.RunnerArgs, Skills: s.Skills,
		Workflows: s.Workflows, Policy: s.Policy}
}

func toOversightRecord(o *engine.Oversight) *oversightRecord {
	if o == nil {
		return nil
	}
	return &oversightRecord{Approvers: o.Approvers, RemindAfterNS: int64(o.RemindAfter),
		DecisionTimeoutNS: int64(o.DecisionTimeout), OnTimeout: string(o.OnTimeout)}
}

func fromOversightRecord(p *stateReader, r *oversightRecord) *engine.Oversight {
	if r == nil {
		return nil
	}
	return &engine.Oversight{Approvers: r.Approvers, RemindAfter: time.Duration(r.RemindAfterNS),
		DecisionTimeout: time.Duration(r.DecisionTimeoutNS),
		OnTimeout:       parseOpt(p, "decision timeout action", r.OnTimeout, engine.ParseTimeoutAction)}
}

func fromSetupRecord(r *setupRecord) *engine.Setup {
	if r == nil {
		return nil
	}
	return &engine.Setup{Runner: r.Runner, RunnerCmd: r.RunnerCmd, RunnerArgs: r.RunnerArgs, Skills: r.Skills,
		Workflows: r.Workflows, Policy: r.Policy}
}

func toSetupChanges(cs []engine.SetupChange) []setupChangeRecord {
	if cs == nil {
		return nil
	}
	out := make([]setupChangeRecord, len(cs))
	for i, c := range cs {
		out[i] = setupChangeRecord{Field: c.Field, From: c.From, To: c.To}
	}
	return out
}

func fromSetupChanges(cs []setupChangeRecord) []engine.SetupChange {
	if cs == nil {
		return nil
	}
	out := make([]engine.SetupChange, len(cs))
	for i, c := range cs {
		out[i] = engine.SetupChange{Field: c.Field, From: c.From, To: c.To}
	}
	return out
}

func toOrigin(o engine.Origin) originRecord {
	return originRecord{Channel: o.Channel, Thread: o.Thread}
}

func toUsage(u engine.Usage) usageRecord {
	return usageRecord{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheRead: u.CacheRead, CacheCreate: u.CacheCreate, Turns: u.Turns}
}

// samePlanStep reports whether a step's copied fields equal its plan step's.
func samePlanStep(s *engine.Step, p *engine.PlanStep) bool {
	return s.ID == p.ID && s.Skill == p.Skill && s.Effort == p.Effort && s.Prompt == p.Prompt &&
		s.Category == p.Category && s.Execution == p.Execution && s.Leaf == p.Leaf && s.Gate == p.Gate &&
		reflect.DeepEqual(s.Rules, p.Rules)
}

func toRulesRecord(r engine.StepRules) *rulesRecord {
	if reflect.ValueOf(r).IsZero() {
		return nil
	}
	return &rulesRecord{
		Pre: toConditionRecords(r.Pre), Post: toConditionRecords(r.Post),
		OnError: string(r.OnError.Kind), Retries: r.OnError.Retries, BackoffNS: int64(r.OnError.Backoff),
		TimeoutNS: int64(r.Timeout), Optional: r.Optional, Fallback: r.Fallback, Options: r.Options,
		Route: r.Route, Decompose: r.Decompose,
	}
}

func toConditionRecords(cs []engine.Condition) []conditionRecord {
	if cs == nil {
		return nil
	}
	out := make([]conditionRecord, len(cs))
	for i, c := range cs {
		out[i] = conditionRecord{Kind: string(c.Kind), Path: c.Path, Text: c.Text, Pattern: c.Pattern,
			Field: c.Field, Value: c.Value, Command: c.Command, Line: c.Line}
	}
	return out
}

func fromRulesRecord(r *rulesRecord) engine.StepRules {
	if r == nil {
		return engine.StepRules{}
	}
	return engine.StepRules{
		Pre: fromConditionRecords(r.Pre), Post: fromConditionRecords(r.Post),
		OnError:  engine.ErrorPolicy{Kind: engine.ErrorKind(r.OnError), Retries: r.Retries, Backoff: time.Duration(r.BackoffNS)},
		Timeout:  time.Duration(r.TimeoutNS),
		Optional: r.Optional, Fallback: r.Fallback, Options: r.Options, Route: r.Route, Decompose: r.Decompose,
	}
}

func fromConditionRecords(cs []conditionRecord) []engine.Condition {
	if cs == nil {
		return nil
	}
	out := make([]engine.Condition, len(cs))
	for i, c := range cs {
		out[i] = engine.Condition{Kind: engine.ConditionKind(c.Kind), Path: c.Path, Text: c.Text, Pattern: c.Pattern,
			Field: c.Field, Value: c.Value, Command: c.Command, Line: c.Line}
	}
	return out
}

func toRunRecord(r *engine.Run) runRecord {
	rec := runRecord{
		V: recordVersion, ID: string(r.ID), State: string(r.State), Input: string(r.Input),
		Mode: string(r.Mode), DryRun: r.DryRun, Thread: r.Thread, ForceAuto: r.ForceAuto,
		BudgetUSD: r.BudgetUSD, Quorum: r.Quorum, ExclStart: r.ExcludeStarter, StartedBy: r.StartedBy, Origin: toOrigin(r.Origin),
		Created: r.Created, Updated: r.Updated, CostUSD: r.CostUSD, Seq: r.Seq, Halt: r.Halt,
		Paused: r.Paused, PausedBy: r.PausedBy, PauseReason: r.PauseReason, PausedAt: r.PausedAt,
		Setup: toSetupRecord(r.Setup), Oversight: toOversightRecord(r.Oversight),
	}
	if r.Steps != nil {
		rec.Steps = make([]stepRecord, len(r.Steps))
	}
	for i, s := range r.Steps {
		sr := stepRecord{N: s.N, DependsOn: s.DependsOn, ThreadFrom: s.ThreadFrom, Status: string(s.Status), Parent: s.Parent, Using: s.Using, Held: s.Held}
		if i < len(r.Plan.Steps) && samePlanStep(&s, &r.Plan.Steps[i]) {
			sr.FromPlan = true
		} else {
			sr.ID, sr.Skill, sr.Effort, sr.Prompt = s.ID, s.Skill, s.Effort, s.Prompt
			sr.Category, sr.Execution, sr.Leaf, sr.Gate = string(s.Category), string(s.Execution), s.Leaf, string(s.Gate)
			sr.Rules = toRulesRecord(s.Rules)
		}
		if s.Attempts != nil {
			sr.Attempts = make([]attemptRecord, len(s.Attempts))
		}
		for j, a := range s.Attempts {
			sr.Attempts[j] = attemptRecord{
				N: a.N, Skill: a.Skill, Result: string(a.Result), Reason: a.Reason, Summary: a.Summary, Feedback: a.Feedback,
				Artifact: a.Artifact, Edited: a.Edited, Final: a.Final, Size: a.Size, File: a.File, CostUSD: a.CostUSD,
				Usage: toUsage(a.Usage), Started: a.Started, Finished: a.Finished,
				ErrorKind: string(a.ErrorKind), RetryAt: a.RetryAt, Retries: a.Retries,
				Reminded: a.Reminded, TimedOut: a.TimedOut,
			}
		}
		if s.Decisions != nil {
			sr.Decisions = make([]decisionRecord, len(s.Decisions))
		}
		for j, d := range s.Decisions {
			sr.Decisions[j] = decisionRecord{Kind: string(d.Kind), Actor: d.Actor, Time: d.Time,
				Step: d.Step, Attempt: d.Attempt, Key: d.Key, Feedback: d.Feedback}
		}
		rec.Steps[i] = sr
	}
	return rec
}

func toPlanRecord(p engine.Plan) planRecord {
	rec := planRecord{
		V: recordVersion, Input: string(p.Input), Source: p.Source, Domain: string(p.Domain),
		DomainSource: p.DomainSource, DomainAmbiguous: p.DomainAmbiguous, Confidence: p.Confidence,
		ConfidenceReason: p.ConfidenceReason, Context: p.Context, Args: p.Args,
		Flags:    flagsRecord{Auto: p.Flags.Auto, ForceAuto: p.Flags.ForceAuto, DryRun: p.Flags.DryRun, Thread: p.Flags.Thread},
		Manual:   toBlockRecords(p.Manual),
		Deferred: toBlockRecords(p.Deferred),
		Warnings: p.Warnings,
	}
	rec.Steps = toPlanStepRecords(p.Steps)
	return rec
}

func toPlanStepRecords(steps []engine.PlanStep) []planStepRecord {
	if steps == nil {
		return nil
	}
	out := make([]planStepRecord, len(steps))
	for i, s := range steps {
		out[i] = planStepRecord{
			Skill: s.Skill, Effort: s.Effort, PTokens: s.PTokens, Prompt: s.Prompt,
			Category: string(s.Category), Execution: string(s.Execution), Leaf: s.Leaf, Line: s.Line,
			ID: s.ID, DependsOn: s.DependsOn, Gate: string(s.Gate), Rules: toRulesRecord(s.Rules),
		}
	}
	return out
}

func toBlockRecords(bs []engine.Block) []blockRecord {
	if bs == nil {
		return nil
	}
	out := make([]blockRecord, len(bs))
	for i, b := range bs {
		out[i] = blockRecord{Effort: b.Effort, PTokens: b.PTokens, Skill: b.Skill, Prompt: b.Prompt, Reason: b.Reason, Line: b.Line}
	}
	return out
}

// toEventRecord encodes an event. stored is the plan kept in the plans
// bucket for the event's run, nil when none is.
func toEventRecord(ev engine.Event, stored *engine.Plan) eventRecord {
	rec := eventRecord{
		V: recordVersion, Seq: ev.Seq, Time: ev.Time, Type: string(ev.Type), Step: ev.Step, Attempt: ev.Attempt,
		Actor: ev.Actor, Decision: string(ev.Decision), Key: ev.Key, Feedback: ev.Feedback,
		Status: string(ev.Status), Result: string(ev.Result), Reason: ev.Reason, Summary: ev.Summary,
		Size: ev.Size, Artifact: ev.Artifact, File: ev.File, CostUSD: ev.CostUSD, Usage: toUsage(ev.Usage),
		Mode: string(ev.Mode), State: string(ev.State), Skill: ev.Skill, Final: ev.Final, Added: toPlanStepRecords(ev.Added),
		ErrorKind: string(ev.ErrorKind), RetryAt: ev.RetryAt, Retries: ev.Retries, Held: ev.Held, Lost: ev.Lost,
		Setup: toSetupRecord(ev.Setup), Changes: toSetupChanges(ev.Changes),
	}
	if st := ev.Start; st != nil {
		rec.Start = &startRecord{
			ID: string(st.ID), Mode: string(st.Mode), DryRun: st.DryRun,
			Thread: st.Thread, ForceAuto: st.ForceAuto, BudgetUSD: st.BudgetUSD, StartedBy: st.StartedBy,
			Quorum: st.Quorum, ExclStart: st.ExcludeStarter,
			Origin: toOrigin(st.Origin), Setup: toSetupRecord(st.Setup), Oversight: toOversightRecord(st.Oversight),
		}
		if stored != nil && reflect.DeepEqual(st.Plan, *stored) {
			rec.Start.PlanStored = true
		} else {
			pr := toPlanRecord(st.Plan)
			rec.Start.Plan = &pr
		}
	}
	return rec
}

func toSummaryRecord(r *engine.Run) summaryRecord {
	s := r.Summary()
	return summaryRecord{
		V: recordVersion, State: string(s.State), Input: string(s.Input), Source: s.Source,
		Origin: toOrigin(s.Origin), Created: s.Created, Updated: s.Updated,
		StepsTotal: s.StepsTotal, StepsDone: s.StepsDone,
	}
}

// Decoding: records to engine values. Typed states go through the engine's
// parsers, so a state this gonogo does not know is an error, never a guess.

// stateReader collects the first parse error, so conversion code reads as a
// list of fields rather than a ladder of ifs.
type stateReader struct{ err error }

func (p *stateReader) fail(what string, err error) {
	if p.err == nil {
		p.err = fmt.Errorf("%s: %w", what, err)
	}
}

func parseReq[T ~string](p *stateReader, what, s string, parse func(string) (T, error)) T {
	v, err := parse(s)
	if err != nil {
		p.fail(what, err)
	}
	return v
}

// parseOpt reads a state that may be absent (the empty string).
func parseOpt[T ~string](p *stateReader, what, s string, parse func(string) (T, error)) T {
	if s == "" {
		return ""
	}
	return parseReq(p, what, s, parse)
}

func fromOrigin(o originRecord) engine.Origin {
	return engine.Origin{Channel: o.Channel, Thread: o.Thread}
}

func fromUsage(u usageRecord) engine.Usage {
	return engine.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheRead: u.CacheRead, CacheCreate: u.CacheCreate, Turns: u.Turns}
}

// fromRunRecord builds a run from its snapshot and plan records.
func fromRunRecord(rec *runRecord, plan engine.Plan) (*engine.Run, error) {
	if err := checkVersion(rec.V); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	var p stateReader
	r := &engine.Run{
		ID:        engine.RunID(rec.ID),
		State:     parseReq(&p, "state", rec.State, engine.ParseRunState),
		Input:     engine.InputKind(rec.Input),
		Mode:      parseReq(&p, "mode", rec.Mode, engine.ParseMode),
		DryRun:    rec.DryRun,
		Thread:    rec.Thread,
		ForceAuto: rec.ForceAuto,
		BudgetUSD: rec.BudgetUSD, Quorum: rec.Quorum, ExcludeStarter: rec.ExclStart,
		Plan:      plan,
		StartedBy: rec.StartedBy,
		Origin:    fromOrigin(rec.Origin),
		Created:   rec.Created,
		Updated:   rec.Updated,
		CostUSD:   rec.CostUSD,
		Seq:       rec.Seq,
		Halt:      rec.Halt,
		Paused:    rec.Paused, PausedBy: rec.PausedBy, PauseReason: rec.PauseReason, PausedAt: rec.PausedAt,
		Setup: fromSetupRecord(rec.Setup), Oversight: fromOversightRecord(&p, rec.Oversight),
	}
	if rec.Steps != nil {
		r.Steps = make([]engine.Step, len(rec.Steps))
	}
	for i, sr := range rec.Steps {
		where := fmt.Sprintf("step %d", i+1)
		if sr.FromPlan {
			if i >= len(plan.Steps) {
				return nil, fmt.Errorf("%s refers to plan step %d of %d", where, i+1, len(plan.Steps))
			}
			ps := plan.Steps[i]
			sr.ID, sr.Skill, sr.Effort, sr.Prompt = ps.ID, ps.Skill, ps.Effort, ps.Prompt
			sr.Category, sr.Execution, sr.Leaf, sr.Gate = string(ps.Category), string(ps.Execution), ps.Leaf, string(ps.Gate)
			sr.Rules = toRulesRecord(ps.Rules)
		}
		s := engine.Step{
			StepDef: &engine.StepDef{
				N: sr.N, ID: sr.ID, Skill: sr.Skill, Effort: sr.Effort, Prompt: sr.Prompt,
				Category: engine.Category(sr.Category), Execution: engine.Execution(sr.Execution), Leaf: sr.Leaf,
				DependsOn: sr.DependsOn, ThreadFrom: sr.ThreadFrom, Rules: fromRulesRecord(sr.Rules),
				Parent: sr.Parent,
				Gate:   parseOpt(&p, where+" gate", sr.Gate, engine.ParseGate),
			},
			StepState: &engine.StepState{
				Using:  sr.Using,
				Held:   sr.Held,
				Status: parseReq(&p, where+" status", sr.Status, engine.ParseStepStatus),
			},
		}
		if sr.Attempts != nil {
			s.Attempts = make([]engine.Attempt, len(sr.Attempts))
		}
		for j, a := range sr.Attempts {
			s.Attempts[j] = engine.Attempt{
				N: a.N, Skill: a.Skill,
				Result: parseOpt(&p, fmt.Sprintf("%s attempt %d result", where, a.N), a.Result, engine.ParseResult),
				Reason: a.Reason, Summary: a.Summary, Feedback: a.Feedback, Artifact: a.Artifact,
				Edited: a.Edited, Final: a.Final, Size: a.Size, File: a.File, CostUSD: a.CostUSD, Usage: fromUsage(a.Usage),
				Started: a.Started, Finished: a.Finished,
				ErrorKind: parseOpt(&p, fmt.Sprintf("%s attempt %d error kind", where, a.N), a.ErrorKind, engine.ParseAgentErrorKind),
				RetryAt:   a.RetryAt, Retries: a.Retries, Reminded: a.Reminded, TimedOut: a.TimedOut,
			}
		}
		if sr.Decisions != nil {
			s.Decisions = make([]engine.Decision, len(sr.Decisions))
		}
		for j, d := range sr.Decisions {
			s.Decisions[j] = engine.Decision{
				Kind:  parseReq(&p, where+" decision", d.Kind, engine.ParseDecisionKind),
				Actor: d.Actor, Time: d.Time, Step: d.Step, Attempt: d.Attempt, Key: d.Key, Feedback: d.Feedback,
			}
		}
		r.Steps[i] = s
	}
	if p.err != nil {
		return nil, p.err
	}
	return r, nil
}

func fromPlanRecord(rec *planRecord) (engine.Plan, error) {
	if err := checkVersion(rec.V); err != nil {
		return engine.Plan{}, fmt.Errorf("plan: %w", err)
	}
	var p stateReader
	plan := engine.Plan{
		Input: engine.InputKind(rec.Input), Source: rec.Source, Domain: engine.Domain(rec.Domain),
		DomainSource: rec.DomainSource, DomainAmbiguous: rec.DomainAmbiguous, Confidence: rec.Confidence,
		ConfidenceReason: rec.ConfidenceReason, Context: rec.Context, Args: rec.Args,
		Flags:    engine.Flags{Auto: rec.Flags.Auto, ForceAuto: rec.Flags.ForceAuto, DryRun: rec.Flags.DryRun, Thread: rec.Flags.Thread},
		Manual:   fromBlockRecords(rec.Manual),
		Deferred: fromBlockRecords(rec.Deferred),
		Warnings: rec.Warnings,
	}
	plan.Steps = fromPlanStepRecords(&p, "plan step", rec.Steps)
	return plan, p.err
}

func fromPlanStepRecords(p *stateReader, what string, recs []planStepRecord) []engine.PlanStep {
	if recs == nil {
		return nil
	}
	out := make([]engine.PlanStep, len(recs))
	for i, s := range recs {
		out[i] = engine.PlanStep{
			Skill: s.Skill, Effort: s.Effort, PTokens: s.PTokens, Prompt: s.Prompt,
			Category: engine.Category(s.Category), Execution: engine.Execution(s.Execution), Leaf: s.Leaf,
			Line: s.Line, ID: s.ID, DependsOn: s.DependsOn,
			Gate:  parseOpt(p, fmt.Sprintf("%s %d gate", what, i+1), s.Gate, engine.ParseGate),
			Rules: fromRulesRecord(s.Rules),
		}
	}
	return out
}

func fromBlockRecords(bs []blockRecord) []engine.Block {
	if bs == nil {
		return nil
	}
	out := make([]engine.Block, len(bs))
	for i, b := range bs {
		out[i] = engine.Block{Effort: b.Effort, PTokens: b.PTokens, Skill: b.Skill, Prompt: b.Prompt, Reason: b.Reason, Line: b.Line}
	}
	return out
}

// fromEventRecord decodes an event; stored reads the run's plan from the
// plans bucket, for a run-started event that refers to it.
func fromEventRecord(rec *eventRecord, stored func() (engine.Plan, error)) (engine.Event, error) {
	if err := checkVersion(rec.V); err != nil {
		return engine.Event{}, fmt.Errorf("event %d: %w", rec.Seq, err)
	}
	var p stateReader
	ev := engine.Event{
		Seq: rec.Seq, Time: rec.Time,
		Type:    parseReq(&p, "type", rec.Type, engine.ParseEventType),
		Step:    rec.Step,
		Attempt: rec.Attempt, Actor: rec.Actor,
		Decision: parseOpt(&p, "decision", rec.Decision, engine.ParseDecisionKind),
		Key:      rec.Key, Feedback: rec.Feedback,
		Status: parseOpt(&p, "status", rec.Status, engine.ParseStepStatus),
		Result: parseOpt(&p, "result", rec.Result, engine.ParseResult),
		Reason: rec.Reason, Summary: rec.Summary, Size: rec.Size, Artifact: rec.Artifact, File: rec.File,
		CostUSD: rec.CostUSD, Usage: fromUsage(rec.Usage),
		Mode:  parseOpt(&p, "mode", rec.Mode, engine.ParseMode),
		State: parseOpt(&p, "state", rec.State, engine.ParseRunState),
		Skill: rec.Skill, Final: rec.Final,
		ErrorKind: parseOpt(&p, "error kind", rec.ErrorKind, engine.ParseAgentErrorKind),
		RetryAt:   rec.RetryAt, Retries: rec.Retries, Held: rec.Held, Lost: rec.Lost,
		Setup: fromSetupRecord(rec.Setup), Changes: fromSetupChanges(rec.Changes),
	}
	ev.Added = fromPlanStepRecords(&p, "added step", rec.Added)
	if st := rec.Start; st != nil {
		var plan engine.Plan
		var err error
		switch {
		case st.PlanStored:
			plan, err = stored()
		case st.Plan != nil:
			plan, err = fromPlanRecord(st.Plan)
		}
		if err != nil {
			p.fail("start", err)
		}
		ev.Start = &engine.RunStart{
			ID: engine.RunID(st.ID), Plan: plan,
			Mode:   parseReq(&p, "start mode", st.Mode, engine.ParseMode),
			DryRun: st.DryRun, Thread: st.Thread, ForceAuto: st.ForceAuto, BudgetUSD: st.BudgetUSD,
			Quorum: st.Quorum, ExcludeStarter: st.ExclStart,
			StartedBy: st.StartedBy, Origin: fromOrigin(st.Origin), Setup: fromSetupRecord(st.Setup),
			Oversight: fromOversightRecord(&p, st.Oversight),
		}
	}
	if p.err != nil {
		return engine.Event{}, fmt.Errorf("event %d: %w", rec.Seq, p.err)
	}
	return ev, nil
}

func fromSummaryRecord(id engine.RunID, rec *summaryRecord) (engine.RunSummary, error) {
	if err := checkVersion(rec.V); err != nil {
		return engine.RunSummary{}, fmt.Errorf("summary: %w", err)
	}
	state, err := engine.ParseRunState(rec.State)
	if err != nil {
		return engine.RunSummary{}, fmt.Errorf("summary: %w", err)
	}
	return engine.RunSummary{
		ID: id, State: state, Input: engine.InputKind(rec.Input), Source: rec.Source,
		Origin: fromOrigin(rec.Origin), Created: rec.Created, Updated: rec.Updated,
		StepsTotal: rec.StepsTotal, StepsDone: rec.StepsDone,
	}, nil
}
