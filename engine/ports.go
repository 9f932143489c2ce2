package engine

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors callers branch on. Wrap them with context; compare with
// errors.Is.
var (
	ErrNotFound   = errors.New("not found")
	ErrForbidden  = errors.New("not allowed to decide on this run")
	ErrStale      = errors.New("this step has moved on")
	ErrDuplicate  = errors.New("already applied")
	ErrNotWaiting = errors.New("not waiting for a decision")
	ErrLocked     = errors.New("the data directory is in use by another gonogo")
	// ErrKeyReused refuses a decision whose idempotency key its run
	// recorded for another decision (see KeyedBefore): unlike ErrDuplicate,
	// what was asked for was not done.
	ErrKeyReused = errors.New("the key was used for another decision")
	// ErrPaused refuses what a paused run does not do (start a step, an
	// automatic retry), and a second pause.
	ErrPaused = errors.New("already paused")
	// ErrNotMoving refuses to pause a run that is waiting for a decision
	// or has finished: nothing would start anyway.
	ErrNotMoving = errors.New("nothing to pause")
	// ErrNotPaused refuses to resume a run that is not paused.
	ErrNotPaused = errors.New("not paused")
	// ErrNotAwaitingStart refuses to start or cancel, as a run awaiting
	// Start, a run that does not await it (any more): it has started, or
	// ended.
	ErrNotAwaitingStart = errors.New("not awaiting Start")
	// ErrInvalidDecision refuses a decision the step waits for but not
	// as it was sent: an edit without its replacement, a pick of a
	// candidate the step does not have or that cannot be picked. Its
	// message says what is wrong; see invalidDecision.
	ErrInvalidDecision = errors.New("the decision does not fit the step")
	// ErrFilesPending is returned by a Store whose commit is durable but
	// whose artifact files could not be written yet; the change stands and
	// the files are written when the store is next opened.
	ErrFilesPending = errors.New("the change is committed, but an artifact file is not written yet (it is written when the store is next opened)")
)

// Commit is one durable change to a run: journal events, the artifacts they
// store, the files to write under the data directory once the change is
// committed, an optional idempotency key and the run as it stands after the
// events. A Store applies a Commit in one fsynced transaction (see
// Store.Commit for what it refuses).
type Commit struct {
	Run    *Run // the run after Events were applied; Run.Seq is the last event's Seq
	Events []Event
	// After is the Seq the change was computed against (0 for a new run);
	// a Store refuses the commit with ErrStale when the stored journal is
	// elsewhere.
	After     uint64
	Artifacts []ArtifactWrite
	Files     []FileWrite
	Key       string // idempotency key; a Store refuses a seen key with ErrDuplicate
}

// ArtifactWrite stores the body of one attempt's artifact. A later write for
// the same step and attempt (an edit) replaces it; the agent's original is
// kept as the first version.
type ArtifactWrite struct {
	Step    int
	Attempt int
	Body    []byte
}

// FileWrite places an artifact on disk under the data directory, written
// atomically (temp file, then rename) after the commit. Path is relative to
// the data directory and uses forward slashes. A FileWrite with From set
// renames an existing file instead (an earlier attempt making way for a new
// one).
type FileWrite struct {
	Path string
	Body []byte
	From string
}

// RunSummary is one line of a run listing.
type RunSummary struct {
	ID         RunID
	State      RunState
	Input      InputKind
	Source     string
	Origin     Origin
	Created    time.Time
	Updated    time.Time
	StepsTotal int
	StepsDone  int
}

// Store keeps runs durably. Every method is one transaction, and a Store
// is safe for concurrent use. engine/storetest checks a Store against this
// contract; the bbolt store (storage) and the engine tests' in-memory store
// both pass it.
//
// Opening a store recovers it before anything reads it: a step recorded as
// running (which no process can still be running once the store is open
// again) is interrupted with a journal event, the change Recover returns;
// files left pending by an earlier failure are written.
type Store interface {
	// Commit applies a change in one fsynced transaction, all of it or
	// nothing:
	//
	//   - The journal: c.Events continue the stored journal. Each run's
	//     events are numbered 1, 2, 3, ... without a gap, and c.Run.Seq
	//     is the last event's; a commit without events, with a gap, or
	//     whose run does not end at its last event is refused.
	//   - Staleness: a commit whose After is not the stored journal's last
	//     seq was computed against another state of the run and is refused
	//     with ErrStale. So is the first commit of a run (After 0) whose id
	//     is already held, and a commit with After above 0 for a run the
	//     store does not hold (that error also wraps ErrNotFound).
	//   - Idempotency: a c.Key the store has seen, for any run, refuses
	//     the commit with ErrDuplicate. (A decision's key belongs to its
	//     run: the engine commits it as DecisionStoreKey.)
	//   - Artifacts: each ArtifactWrite becomes the attempt's current body;
	//     a later write for the same attempt (an edit) replaces it, and the
	//     store keeps the agent's original as the first version.
	//   - Files: a store with a data directory writes c.Files under it once
	//     the transaction has committed, in commit order. When one cannot
	//     be written, Commit returns an error wrapping ErrFilesPending: the
	//     change stands, and the file is written when the store is next
	//     opened.
	//
	// A refused commit changes nothing. Commit keeps none of c after it
	// returns; c must not change while it runs.
	Commit(ctx context.Context, c Commit) error
	// Load returns the run as its last commit left it, the caller's own
	// to keep, or an error wrapping ErrNotFound.
	Load(ctx context.Context, id RunID) (*Run, error)
	// Artifact returns the current body of an attempt's artifact (the last
	// edit, else the agent's original), or an error wrapping ErrNotFound.
	Artifact(ctx context.Context, id RunID, step, attempt int) ([]byte, error)
	// List returns a summary of every run (Run.Summary as of its last
	// commit), newest first: in NewestFirst's order, by creation time
	// (run ids tell it only to the second), then by id.
	List(ctx context.Context) ([]RunSummary, error)
	// Notes returns the notes kept with a run, the caller's own map (empty
	// when none were set), or an error wrapping ErrNotFound.
	//
	// Notes are small facts a front end keeps with a run (the Slack
	// messages it posted, the last journal event it has shown), so that
	// after a restart it updates what it posted instead of posting again.
	// They are not part of the run's journal and change nothing about the
	// run.
	Notes(ctx context.Context, id RunID) (map[string]string, error)
	// SetNotes merges set into a run's notes, durably; an empty value
	// deletes its key. A run the store does not hold is ErrNotFound.
	SetNotes(ctx context.Context, id RunID, set map[string]string) error
}

// Inbox keeps what a front end accepted before it acts on it (the Slack
// bot's envelopes): each request is recorded durably before it is
// acknowledged, marked done once carried out, and whatever a crash left
// recorded is carried out again on start. Carrying one out twice changes
// nothing: decisions and run starts carry idempotency keys.
type Inbox interface {
	// Record keeps a request durably (on disk when it returns) and
	// returns its id; ids grow. An inbox shared by several front ends
	// refuses, with an error wrapping ErrDuplicate, a request another has
	// kept already: that one carries it out, and the caller drops it.
	Record(ctx context.Context, payload []byte) (uint64, error)
	// Pending lists the requests recorded and not done, oldest first.
	Pending(ctx context.Context) ([]InboxItem, error)
	// Done forgets requests that were carried out.
	Done(ctx context.Context, ids ...uint64) error
}

// InboxItem is a request kept in an Inbox: as Record was given it (nil
// when it can no longer be read), and when it was recorded.
type InboxItem struct {
	ID       uint64
	Payload  []byte
	Received time.Time
}

// Job is one attempt handed to a runner.
type Job struct {
	Run     RunID
	Step    int // 1-based
	Attempt int
	Skill   string
	Prompt  string // the composed prompt, given to the agent on stdin
	// SkillDir is the absolute path of the skill's folder (the one holding
	// its SKILL.md and references/), which runners let the agent read; ""
	// when unknown.
	SkillDir string
	DryRun   bool
	// Timeout is the step's own limit (a workflow's timeout:); 0 leaves the
	// runner's default.
	Timeout time.Duration
	// Options are a workflow step's runner options (model: NAME, ...).
	Options map[string]string
	// Runner is the runner a best-of step's candidate runs on; "" is the
	// run's own. A Runner that cannot run on another says so in the
	// Outcome's Err.
	Runner string
}

// Progress is live news from a running agent.
type Progress struct {
	Turns     int
	ToolCalls int
	LastTool  string
	// Status is the agent's own latest status line, such as "Reconnecting...
	// waiting for network" or a retry after a rate limit; "" when it has
	// said none or went back to work since.
	Status  string
	CostUSD float64
	Elapsed time.Duration
}

// Outcome is what a runner brings back. Err set (or ExitCode non-zero, or
// AgentError set) makes the attempt FAILED; otherwise the rubric judges
// Artifact.
type Outcome struct {
	Artifact   []byte
	Err        error  // the runner could not run the agent, or it timed out or was cancelled
	ExitCode   int    // the agent's exit code
	AgentError string // an error the agent itself reported
	// AgentErrorKind says what kind of error AgentError is, so the engine
	// can tell one worth waiting out (a rate limit, an overload) from one a
	// person must fix (a login); "" when AgentError is.
	AgentErrorKind AgentErrorKind
	Stderr         string // the end of the agent's stderr, for the reason
	Truncated      bool   // output went past the cap
	CostUSD        float64
	Usage          Usage
	NotRun         bool // the dry-run runner: nothing was executed
}

// AgentErrorKind is a machine-readable kind of error an agent reported.
type AgentErrorKind string

// The kinds of agent error runners tell apart.
const (
	AgentErrAuth           AgentErrorKind = "auth"             // not logged in, a missing or rejected API key
	AgentErrBilling        AgentErrorKind = "billing"          // no credit or quota left on the account
	AgentErrRateLimit      AgentErrorKind = "rate-limit"       // too many requests: wait and try again
	AgentErrOverloaded     AgentErrorKind = "overloaded"       // the provider is overloaded or failing: wait and try again
	AgentErrContextTooLong AgentErrorKind = "context-too-long" // the prompt does not fit the model's context
	AgentErrOther          AgentErrorKind = "other"
)

// Transient reports whether an error of this kind usually goes away by
// itself, so that trying again later can succeed.
func (k AgentErrorKind) Transient() bool {
	return k == AgentErrRateLimit || k == AgentErrOverloaded
}

// Runner executes one attempt. Run blocks until the agent is done, the
// step's timeout passes or ctx is cancelled (an abort or a cancel); in every
// case the agent's whole process group is gone when it returns. progress may
// be called from another goroutine while Run is under way.
type Runner interface {
	Run(ctx context.Context, job Job, progress func(Progress)) Outcome
}

// Notice tells a front end that something visible happened to a run.
type Notice struct {
	Run      *Run // a snapshot, safe to keep and shared: never change it
	Event    Event
	Progress *Progress // set for live progress of a running step
	// Err is set when the service could not record a step's result (the
	// store failed, say the disk is full); the run stays as it was stored.
	Err error
}

// Notifier is told about every committed change (after it is durable) and
// about live progress. It must not block for long.
type Notifier interface {
	Notify(n Notice)
}
