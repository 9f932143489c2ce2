package temporalbackend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/gonogo/gonogo/engine"
)

// A start key (engine.StartOptions.Key: the Slack envelope that asked for
// the run) starts one run, however many front ends carry the request out.
// Temporal keeps a workflow id taken for the namespace's retention, so a
// start first claims its key by starting a claim workflow whose id is
// derived from the key and whose memo names the run id it chose; the
// claim workflow ends at once. A second start of the key finds the claim
// taken and the run it names: a run that exists refuses the start with
// engine.ErrDuplicate; one that does not (its claimer died between claim
// and start) is started under the claimed id, by whichever start gets
// there first.

const (
	// ClaimWorkflowName is the workflow that holds a start key's claim.
	ClaimWorkflowName = "gonogo.start-claim"
	// claimPrefix begins a claim workflow's id, followed by the hex
	// SHA-256 of the start key.
	claimPrefix = "gonogo-start-"
	// memoClaimedRun is the claim workflow's memo key of the run id.
	memoClaimedRun = "gonogo-run"
)

// claimWorkflow holds a start key's claim in its id and memo; it has
// nothing to do.
func claimWorkflow(workflow.Context) error { return nil }

// claimID is the id of key's claim workflow.
func claimID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return claimPrefix + hex.EncodeToString(sum[:])
}

// startClaimed starts a run of p under start key opt.Key: under a new id
// once the key is claimed, under the claimed id when its claimer never
// started it, and not at all when the claimed run exists
// (engine.ErrDuplicate).
func (b *Backend) startClaimed(ctx context.Context, p engine.Plan, opt engine.StartOptions) (*engine.Run, error) {
	now := b.cfg.Now()
	id, err := b.claim(ctx, opt.Key, b.cfg.NewID(now))
	if err != nil {
		return nil, err
	}
	r, err := b.start(ctx, p, opt, id, now)
	if errors.Is(err, engine.ErrStale) {
		// Another start of the key started the claimed run first.
		return nil, fmt.Errorf("start key %q: run %s was started: %w", opt.Key, id, engine.ErrDuplicate)
	}
	return r, err
}

// claim claims key for run id and returns the id to start: id when the
// claim is this start's, the claimed id when the key was claimed for a
// run whose workflow does not exist, else engine.ErrDuplicate.
func (b *Backend) claim(ctx context.Context, key string, id engine.RunID) (engine.RunID, error) {
	cid := claimID(key)
	_, err := b.cfg.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: cid, TaskQueue: b.cfg.TaskQueue,
		Memo:                                     map[string]any{memoClaimedRun: string(id)},
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		// A claim's task is trivial; one no worker takes soon is still
		// a claim (its id is taken).
		WorkflowRunTimeout: time.Hour,
	}, ClaimWorkflowName)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err == nil {
		return id, nil
	}
	if !errors.As(err, &started) {
		return "", fmt.Errorf("claim start key %q: %w", key, err)
	}
	desc, err := b.cfg.Client.DescribeWorkflowExecution(ctx, cid, "")
	if err != nil {
		return "", fmt.Errorf("read the claim of start key %q: %w", key, err)
	}
	var held string
	p := desc.GetWorkflowExecutionInfo().GetMemo().GetFields()[memoClaimedRun]
	if p == nil {
		return "", fmt.Errorf("the claim of start key %q names no run", key)
	}
	if err := converter.GetDefaultDataConverter().FromPayload(p, &held); err != nil {
		return "", fmt.Errorf("the claim of start key %q (workflow %s) cannot be read: %w", key, cid, err)
	}
	if held == "" {
		return "", fmt.Errorf("the claim of start key %q (workflow %s) names no run", key, cid)
	}
	claimed := engine.RunID(held)
	_, err = b.cfg.Client.DescribeWorkflowExecution(ctx, held, "")
	var nf *serviceerror.NotFound
	switch {
	case err == nil:
		return "", fmt.Errorf("start key %q started run %s already: %w", key, claimed, engine.ErrDuplicate)
	case errors.As(err, &nf):
		return claimed, nil
	default:
		return "", fmt.Errorf("run %s of start key %q: %w", claimed, key, err)
	}
}
