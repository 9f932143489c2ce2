package record

import "time"

// Slices are encoded without omitempty so that nil and empty survive a round
// trip: what a reader decodes is what was encoded.

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

	// A best-of step's candidate; absent from other attempts.
	Runner    string `json:"runner,omitempty"`
	Candidate int    `json:"candidate,omitempty"`
	Picked    bool   `json:"picked,omitempty"`
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
	// A pick's candidate; absent from other decisions.
	Candidate int `json:"candidate,omitempty"`
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
	BestOf    []string          `json:"best_of,omitempty"`
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
	ErrorKind string    `json:"error_kind,omitempty"`
	RetryAt   time.Time `json:"retry_at,omitzero"`
	Retries   int       `json:"retries,omitempty"`
	Held      bool      `json:"held,omitempty"`
	Agent     string    `json:"agent,omitempty"`
	Lost      time.Time `json:"lost,omitzero"` // step-interrupted; absent from older records
	// A best-of candidate's start, and a pick; absent from other events.
	Runner    string           `json:"runner,omitempty"`
	Candidate int              `json:"candidate,omitempty"`
	Added     []planStepRecord `json:"added,omitempty"`
	Mode      string           `json:"mode,omitempty"`
	State     string           `json:"state,omitempty"`
	Start     *startRecord     `json:"start,omitempty"`
	// For setup-changed events, which older records never hold.
	Setup   *setupRecord        `json:"setup,omitempty"`
	Changes []setupChangeRecord `json:"changes,omitempty"`
}

// startRecord leaves the plan out when it is the run's own copy, stored
// once beside the journal (PlanStored): the journal stays small, and
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
