package temporalbackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// A run's workflow keeps what gonogo runs lists in Temporal's visibility
// store, so a listing reads no workflow: its search attributes (state,
// starter, channel: what runs are filtered by) and a memo with the rest of
// the run's summary. Both are set when the run starts and kept current by
// the workflow as the run changes.

// changeListing gates the workflow's upkeep of its search attributes and
// memo: runs started before it replay without it.
const changeListing = "gonogo-listing"

// memoSummary is the memo key of a run's summary.
const memoSummary = "gonogo-summary"

var (
	stateKey   = temporal.NewSearchAttributeKeyKeyword(AttrState)
	starterKey = temporal.NewSearchAttributeKeyKeyword(AttrStarter)
	channelKey = temporal.NewSearchAttributeKeyKeyword(AttrChannel)
)

// summaryOf is run r's summary as its memo keeps it: the store's own
// versioned summary record (record.EncodeSummary), so no second
// encoding of it exists.
func summaryOf(r *engine.Run) (string, error) {
	b, err := record.EncodeSummary(r)
	return string(b), err
}

// startAttributes are a new run's search attributes.
func startAttributes(r *engine.Run) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(stateKey.ValueSet(string(r.State)), starterKey.ValueSet(r.StartedBy),
		channelKey.ValueSet(r.Origin.Channel))
}

// publish keeps the run's search attributes and memo current, for runs
// started under changeListing.
func (f *flow) publish(ctx workflow.Context) error {
	if f.listing < 1 {
		return nil
	}
	sum, err := summaryOf(f.run)
	if err != nil || sum == f.published {
		return err
	}
	if state := string(f.run.State); state != f.publishedState {
		if err := workflow.UpsertTypedSearchAttributes(ctx, stateKey.ValueSet(state)); err != nil {
			return err
		}
		f.publishedState = state
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{memoSummary: json.RawMessage(sum)}); err != nil {
		return err
	}
	f.published = sum
	return nil
}

// listQuery is the visibility query of gonogo's runs.
var listQuery = fmt.Sprintf("WorkflowType = '%s'", WorkflowName)

// List returns the summaries of the newest runs, limit at most, newest
// first, from Temporal's visibility store. A run whose workflow keeps no
// summary (one started before runs kept it) or whose workflow ended
// without the summary saying so (cancelled through Temporal) is read
// through its workflow instead.
func (b *Backend) List(ctx context.Context, limit int) ([]engine.RunSummary, error) {
	var out []engine.RunSummary
	var token []byte
	for len(out) < limit {
		res, err := b.cfg.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: listQuery, PageSize: int32(min(limit, 1000)), NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list runs on Temporal: %w", err)
		}
		for _, ex := range res.GetExecutions() {
			id := engine.RunID(ex.GetExecution().GetWorkflowId())
			s, ok := fromMemo(id, ex.GetMemo().GetFields()[memoSummary])
			closed := ex.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
			if !ok || (closed && s.State != engine.RunCompleted && s.State != engine.RunAborted) {
				r, err := b.Load(ctx, id)
				if err != nil {
					continue // a run no worker can read now is left out, not the listing
				}
				s = r.Summary()
			}
			if out = append(out, s); len(out) == limit {
				break
			}
		}
		if token = res.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	return out, nil
}

func fromMemo(id engine.RunID, p *commonpb.Payload) (engine.RunSummary, bool) {
	if p == nil || len(p.GetData()) == 0 {
		return engine.RunSummary{}, false
	}
	var raw json.RawMessage
	if err := converter.GetDefaultDataConverter().FromPayload(p, &raw); err != nil {
		return engine.RunSummary{}, false
	}
	s, err := record.DecodeSummary(id, raw)
	return s, err == nil
}

// missingAttributes says a start was refused because the namespace lacks
// gonogo's search attributes, in words that say what to do.
func missingAttributes(err error) error {
	var inv *serviceerror.InvalidArgument
	if errors.As(err, &inv) && strings.Contains(strings.ToLower(inv.Error()), "search attribute") {
		return fmt.Errorf("the namespace lacks gonogo's search attributes: run gonogo temporal setup (%w)", err)
	}
	return err
}
