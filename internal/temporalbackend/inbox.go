package temporalbackend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

var _ engine.Inbox = (*Inbox)(nil)

// Names of the inbox's parts, part of the contract with history as the
// run workflow's are.
const (
	// EnvelopeWorkflowName is the workflow that keeps one envelope until
	// it is carried out.
	EnvelopeWorkflowName = "gonogo.envelope"
	// CarryOutActivity carries out an envelope whose replica never said
	// it had; the Slack front ends register it with RegisterInbox.
	CarryOutActivity = "CarryOut"
	// EnvelopeIDPrefix begins every envelope workflow's id; the envelope's
	// key follows.
	EnvelopeIDPrefix = "gonogo-envelope-"

	sigDone = "done"
	// carryAttempts is how often CarryOut is tried before the envelope is
	// given up (its workflow fails, with the last error).
	carryAttempts = 10
	carryTimeout  = 2 * time.Minute
	carryBeat     = 20 * time.Second
)

// InboxConfig wires an Inbox.
type InboxConfig struct {
	// TaskQueue is where envelope workflows are polled (default TaskQueue,
	// as Config.TaskQueue: the workers that run the run workflows).
	TaskQueue string
	// SlackQueue is the task queue CarryOut runs on, polled by the Slack
	// front ends (default SlackQueue).
	SlackQueue string
	// RecoverAfter is how long after it was recorded an envelope not
	// marked done is carried out through SlackQueue (default 30 s). It
	// must be longer than a replica takes to carry one out, or an envelope
	// is carried out twice (which changes nothing, but costs).
	RecoverAfter time.Duration
	// Key names an envelope (the bot passes its Slack envelope id): two
	// records with one key are one envelope. Nil names an envelope by
	// its payload's SHA-256.
	Key func(payload []byte) (string, error)
}

// Inbox is an engine.Inbox on Temporal, for Slack front ends that run as
// several replicas sharing one Slack app and keep no state of their own:
// each recorded envelope is a workflow (EnvelopeWorkflow) that waits for
// the replica that recorded it to mark it done and, if none does within
// RecoverAfter (the replica died, and may never come back), has it carried
// out by any replica polling SlackQueue. An envelope recorded already, by
// this replica or another (Socket Mode may send one envelope again to
// another connection), is refused with engine.ErrDuplicate, also after it
// was carried out, for as long as the namespace retains closed workflows.
//
// The ids Record returns are this process's own: they name envelopes in
// memory until Done, and mean nothing to another replica.
//
// Payloads hold what people typed (as the bbolt inbox's file does): they
// are in the envelope workflows' histories, and never logged.
type Inbox struct {
	c   client.Client
	cfg InboxConfig

	mu   sync.Mutex
	last uint64
	ids  map[uint64]string // process-local id to workflow id
}

// NewInbox returns an Inbox that records envelopes through c.
func NewInbox(c client.Client, cfg InboxConfig) *Inbox {
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = TaskQueue
	}
	if cfg.SlackQueue == "" {
		cfg.SlackQueue = SlackQueue
	}
	if cfg.RecoverAfter <= 0 {
		cfg.RecoverAfter = 30 * time.Second
	}
	if cfg.Key == nil {
		cfg.Key = func(payload []byte) (string, error) {
			sum := sha256.Sum256(payload)
			return hex.EncodeToString(sum[:]), nil
		}
	}
	return &Inbox{c: c, cfg: cfg, ids: map[uint64]string{}}
}

// Record starts the envelope's workflow, which holds it durably when
// Record returns, and returns the envelope's id in this process. The time
// it was received is this process's clock, read here. An envelope whose
// key was recorded already is refused with an error wrapping
// engine.ErrDuplicate.
func (i *Inbox) Record(ctx context.Context, payload []byte) (uint64, error) {
	key, err := i.cfg.Key(payload)
	if err != nil {
		return 0, fmt.Errorf("record an envelope: name it: %w", err)
	}
	wid := envelopeID(key)
	in := envelopeRecord{V: record.Version, Payload: payload, RecoverAfterNS: int64(i.cfg.RecoverAfter),
		SlackQueue: i.cfg.SlackQueue, ReceivedUnixNano: time.Now().UnixNano()}
	_, err = i.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: wid, TaskQueue: i.cfg.TaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}, EnvelopeWorkflowName, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return 0, fmt.Errorf("record envelope %s: recorded already: %w", wid, engine.ErrDuplicate)
	}
	if err != nil {
		return 0, fmt.Errorf("record envelope %s: %w", wid, err)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.last++
	i.ids[i.last] = wid
	return i.last, nil
}

// Pending returns nothing: an envelope a replica did not carry out is
// recovered by its own workflow, through SlackQueue, by whichever replica
// takes it, so there is nothing to replay at start.
func (i *Inbox) Pending(context.Context) ([]engine.InboxItem, error) {
	return nil, nil
}

// Done tells the envelopes' workflows that they were carried out, and
// forgets their ids. An id this process does not know is ignored, and so
// is a workflow that ended already (it was carried out through
// SlackQueue meanwhile). An id whose workflow could not be told is
// forgotten too: that envelope is carried out again through SlackQueue
// after RecoverAfter, which applies nothing twice (decisions and starts
// have their keys).
func (i *Inbox) Done(ctx context.Context, ids ...uint64) error {
	var errs []error
	for _, id := range ids {
		i.mu.Lock()
		wid, ok := i.ids[id]
		i.mu.Unlock()
		if !ok {
			continue
		}
		err := i.c.SignalWorkflow(ctx, wid, "", sigDone, nil)
		var nf *serviceerror.NotFound
		if err != nil && !errors.As(err, &nf) {
			errs = append(errs, fmt.Errorf("mark envelope %s done: %w", wid, err))
		}
		i.mu.Lock()
		delete(i.ids, id)
		i.mu.Unlock()
	}
	return errors.Join(errs...)
}

// envelopeID is the workflow id of the envelope named key. A key that is
// not a plain name (letters, digits, '.', '_', '-'; at most 200 bytes) is
// hashed; a hashed key has a ':', which no plain key has.
func envelopeID(key string) string {
	if plainKey(key) {
		return EnvelopeIDPrefix + key
	}
	sum := sha256.Sum256([]byte(key))
	return EnvelopeIDPrefix + "sha256:" + hex.EncodeToString(sum[:])
}

func plainKey(key string) bool {
	if key == "" || len(key) > 200 {
		return false
	}
	for _, r := range key {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

// envelopeRecord is an envelope workflow's input: the envelope as Record
// was given it, when the recording replica received it (its clock, not the
// workflow's), how long its replica has to mark it done, and where it is
// carried out if none does.
type envelopeRecord struct {
	V                int    `json:"v"`
	Payload          []byte `json:"payload"`
	RecoverAfterNS   int64  `json:"recover_after_ns"`
	SlackQueue       string `json:"slack_queue"`
	ReceivedUnixNano int64  `json:"received_unix_nano"`
}

// carryRecord is CarryOut's input: the envelope and when it was received.
type carryRecord struct {
	V                int    `json:"v"`
	Payload          []byte `json:"payload"`
	ReceivedUnixNano int64  `json:"received_unix_nano"`
}

func (c carryRecord) received() time.Time {
	return time.Unix(0, c.ReceivedUnixNano).UTC()
}

// EnvelopeWorkflow keeps one envelope until it is carried out: it ends
// when the replica that recorded it signals "done", and otherwise, once
// RecoverAfter has passed, runs CarryOut on the Slack queue and ends. A
// "done" that arrives while CarryOut runs changes nothing (the envelope is
// carried out twice, which its idempotency keys make harmless). A CarryOut
// that fails every attempt fails the workflow, which nothing else waits on.
func EnvelopeWorkflow(ctx workflow.Context, in envelopeRecord) error {
	if err := record.CheckVersion(in.V); err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), "version", nil)
	}
	done := workflow.GetSignalChannel(ctx, sigDone)
	if ok, _ := done.ReceiveWithTimeout(ctx, time.Duration(in.RecoverAfterNS), nil); ok {
		return nil
	}
	ao := workflow.ActivityOptions{
		TaskQueue: in.SlackQueue, StartToCloseTimeout: carryTimeout, HeartbeatTimeout: carryBeat,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: 30 * time.Second, MaximumAttempts: carryAttempts},
	}
	carry := carryRecord{V: record.Version, Payload: in.Payload, ReceivedUnixNano: in.ReceivedUnixNano}
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, ao), CarryOutActivity, carry).Get(ctx, nil)
	// A "done" that came meanwhile is read, so the workflow ends without
	// a signal left unread.
	for done.ReceiveAsync(nil) {
	}
	if err != nil {
		return fmt.Errorf("carry out the envelope: %w", err)
	}
	return nil
}

// RegisterInbox registers CarryOut on a worker polling SlackQueue: carry
// is how a Slack front end carries out an envelope (as its replay of the
// bbolt inbox's pending envelopes does), given its payload and when it was
// received. It runs with a heartbeat, so that a replica that dies while
// carrying one out is noticed within seconds and another takes it over.
// An error is retried (up to 10 attempts, backing off from 1 s to 30 s)
// unless it is a temporal.NewNonRetryableApplicationError.
func RegisterInbox(r worker.ActivityRegistry, carry func(ctx context.Context, payload []byte, received time.Time) error) {
	r.RegisterActivityWithOptions(func(ctx context.Context, in carryRecord) error {
		if err := record.CheckVersion(in.V); err != nil {
			return temporal.NewNonRetryableApplicationError(err.Error(), "version", nil)
		}
		hb := newHeartbeat(ctx)
		defer hb.stop()
		return carry(ctx, in.Payload, in.received())
	}, activity.RegisterOptions{Name: CarryOutActivity})
}
