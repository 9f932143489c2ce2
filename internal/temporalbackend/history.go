package temporalbackend

import (
	"context"
	"fmt"
	"maps"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// A run's workflow history holds all a reader needs, so the cluster alone
// answers what a run is when no worker could answer a query: the
// workflow's input (startRecord: the run's first events, or, once it
// continued as new, its whole journal and artifact keys), every
// transition's events (the SideEffect markers flow.record writes, in
// package record's encoding), the key each attempt's artifact was put
// under (the step activity's verdict), and the key of each edit (the
// decide update's argument). historyFold reads them back in order, as the
// workflow set them.

// sideEffectMarker and sideEffectData are the names the Go SDK records a
// workflow.SideEffect under; they are part of every recorded history.
const (
	sideEffectMarker = "SideEffect"
	sideEffectData   = "data"
)

// reading is a run as one read of it found it: the run, its current
// artifact keys and, when read from history, its journal.
type reading struct {
	run  *engine.Run
	keys map[string]string
	// edits are the keys of every edit of each attempt, in order (see
	// runView.Edits).
	edits   map[string][]string
	journal []engine.Event
}

// fromHistory reads run id from the history of its latest workflow.
func (b *Backend) fromHistory(ctx context.Context, id engine.RunID) (reading, error) {
	it := b.cfg.Client.GetWorkflowHistory(ctx, string(id), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := newHistoryFold()
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return reading{}, b.notFound(id, err)
		}
		if err := h.add(ev); err != nil {
			return reading{}, fmt.Errorf("run %s: read its workflow history: %w", id, err)
		}
	}
	r, err := h.reading()
	if err != nil {
		return reading{}, fmt.Errorf("run %s: read its workflow history: %w", id, err)
	}
	return r, nil
}

// historyFold gathers a run from its workflow's history events, in order.
type historyFold struct {
	started bool
	journal []engine.Event
	keys    map[string]string
	// editKeys are the keys of every edit of each attempt, in order.
	editKeys map[string][]string
	// fromVerdict marks the keys a step activity's verdict gave: the
	// workflow keeps one only when the attempt's recorded end stored an
	// artifact.
	fromVerdict map[string]bool
	// steps are the step activities scheduled, by event id; edits the
	// edits of accepted decide updates, by event id.
	steps map[int64]string
	edits map[int64]editRef
}

// editRef is an edit's attempt (refKey) and the key its body is under.
type editRef struct{ ref, key string }

func newHistoryFold() *historyFold {
	return &historyFold{keys: map[string]string{}, editKeys: map[string][]string{}, fromVerdict: map[string]bool{},
		steps: map[int64]string{}, edits: map[int64]editRef{}}
}

func (h *historyFold) add(ev *historypb.HistoryEvent) error {
	switch ev.GetEventType() {
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
		return h.start(ev.GetWorkflowExecutionStartedEventAttributes().GetInput())
	case enumspb.EVENT_TYPE_MARKER_RECORDED:
		a := ev.GetMarkerRecordedEventAttributes()
		if a.GetMarkerName() != sideEffectMarker {
			return nil
		}
		return h.transition(a.GetDetails()[sideEffectData])
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
		a := ev.GetActivityTaskScheduledEventAttributes()
		var step, attempt int
		if a.GetActivityType().GetName() == StepActivity {
			if _, err := fmt.Sscanf(a.GetActivityId(), activityIDFormat, &step, &attempt); err == nil {
				h.steps[ev.GetEventId()] = refKey(step, attempt)
			}
		}
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
		a := ev.GetActivityTaskCompletedEventAttributes()
		if ref, ok := h.steps[a.GetScheduledEventId()]; ok {
			return h.verdict(ref, a.GetResult())
		}
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
		in := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput()
		if in.GetName() == updDecide {
			return h.accepted(ev.GetEventId(), in.GetArgs())
		}
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
		a := ev.GetWorkflowExecutionUpdateCompletedEventAttributes()
		if e, ok := h.edits[a.GetAcceptedEventId()]; ok && a.GetOutcome().GetSuccess() != nil {
			h.keys[e.ref], h.fromVerdict[e.ref] = e.key, false
			h.editKeys[e.ref] = append(h.editKeys[e.ref], e.key)
		}
	}
	return nil
}

func decode(p *commonpb.Payloads, out any) error {
	return converter.GetDefaultDataConverter().FromPayloads(p, out)
}

// start reads the workflow's input: the journal so far and its keys.
func (h *historyFold) start(p *commonpb.Payloads) error {
	var in startRecord
	if err := decode(p, &in); err != nil {
		return fmt.Errorf("the workflow's input: %w", err)
	}
	if err := record.CheckVersion(in.V); err != nil {
		return err
	}
	evs, err := record.UnmarshalEvents(in.Events)
	if err != nil {
		return err
	}
	h.started, h.journal = true, evs
	maps.Copy(h.keys, in.Keys)
	maps.Copy(h.editKeys, cloneEdits(in.Edits))
	return nil
}

// transition reads one recorded transition; a refusal recorded nothing.
func (h *historyFold) transition(p *commonpb.Payloads) error {
	var rec sideRecord
	if err := decode(p, &rec); err != nil {
		return fmt.Errorf("a recorded transition: %w", err)
	}
	if err := record.CheckVersion(rec.V); err != nil {
		return err
	}
	if rec.Err != "" || len(rec.Events) == 0 {
		return nil
	}
	evs, err := record.UnmarshalEvents(rec.Events)
	if err != nil {
		return err
	}
	h.journal = append(h.journal, evs...)
	return nil
}

func (h *historyFold) verdict(ref string, p *commonpb.Payloads) error {
	var v verdictRecord
	if err := decode(p, &v); err != nil {
		return fmt.Errorf("a step's verdict: %w", err)
	}
	if err := record.CheckVersion(v.V); err != nil {
		return err
	}
	if v.Key != "" {
		h.keys[ref], h.fromVerdict[ref] = v.Key, true
	}
	return nil
}

func (h *historyFold) accepted(id int64, p *commonpb.Payloads) error {
	var a actRecord
	if err := decode(p, &a); err != nil {
		return fmt.Errorf("a decision: %w", err)
	}
	if err := record.CheckVersion(a.V); err != nil {
		return err
	}
	if a.Edit != nil {
		h.edits[id] = editRef{ref: refKey(a.Step, a.Attempt), key: a.Edit.Key}
	}
	return nil
}

// reading folds the journal gathered: the run as its workflow holds it.
func (h *historyFold) reading() (reading, error) {
	if !h.started {
		return reading{}, fmt.Errorf("it has no start")
	}
	r, err := engine.Fold(&engine.Run{}, h.journal)
	if err != nil {
		return reading{}, err
	}
	for ref := range h.fromVerdict {
		if !h.fromVerdict[ref] {
			continue
		}
		var step, attempt int
		_, _ = fmt.Sscanf(ref, "%d/%d", &step, &attempt)
		if a := attemptOf(r, step, attempt); a == nil || !a.Artifact {
			delete(h.keys, ref)
		}
	}
	return reading{run: r, keys: h.keys, edits: h.editKeys, journal: h.journal}, nil
}

// attemptOf is attempt a of step n of r, or nil.
func attemptOf(r *engine.Run, n, a int) *engine.Attempt {
	st := r.Step(n)
	if st == nil {
		return nil
	}
	for i := range st.Attempts {
		if st.Attempts[i].N == a {
			return &st.Attempts[i]
		}
	}
	return nil
}
