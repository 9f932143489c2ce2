package temporalbackend

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/gonogo/gonogo/engine"
)

// The search attributes gonogo lists runs by: a run's state, who started
// it and the Slack channel it lives in. gonogo temporal setup adds them to
// the namespace; their names are part of the contract with the cluster.
const (
	AttrState   = "GonogoState"
	AttrStarter = "GonogoStarter"
	AttrChannel = "GonogoChannel"
)

// SearchAttributes are the custom search attributes a namespace needs for
// gonogo, with their types.
func SearchAttributes() map[string]enumspb.IndexedValueType {
	return map[string]enumspb.IndexedValueType{
		AttrState:   enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		AttrStarter: enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		AttrChannel: enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	}
}

// DefaultRetention is how long Temporal keeps a finished run's history in
// a namespace gonogo temporal setup creates.
const DefaultRetention = 30 * 24 * time.Hour

// SetupReport says what Setup changed; a repeated Setup changes nothing.
type SetupReport struct {
	Namespace        string
	CreatedNamespace bool
	// AddedAttributes are the search attributes Setup added, sorted; the
	// others were there already.
	AddedAttributes []string
	// Waited is how long Setup waited, after the attributes were added,
	// for the cluster to accept a run that uses them (each part of a
	// cluster learns a namespace's attributes some seconds later).
	Waited time.Duration
}

// Setup makes namespace ready for gonogo: it registers the namespace when
// it is missing (keeping finished runs for retention) and adds the search
// attributes it lacks. It is safe to repeat and to run from several
// machines at once. A search attribute of the same name but another type
// is an error naming it: gonogo cannot list runs by it, and changing its
// type is the cluster operator's call.
//
// A namespace just registered, and attributes just added, take a few
// seconds to reach every part of the cluster: Setup returns only once the
// cluster accepts the start of a workflow that uses gonogo's search
// attributes (a probe, terminated at once), waiting up to ctx's deadline
// or a minute, so that a run started the moment it returns works.
func Setup(ctx context.Context, c client.Client, namespace string, retention time.Duration) (SetupReport, error) {
	rep := SetupReport{Namespace: namespace}
	if namespace == "" {
		return rep, errors.New("temporal setup: no namespace named")
	}
	exists, err := namespaceExists(ctx, c, namespace)
	switch {
	case err != nil:
		return rep, fmt.Errorf("temporal setup: describe namespace %q: %w", namespace, err)
	case !exists:
		_, err = c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
			Namespace:                        namespace,
			Description:                      "gonogo runs",
			WorkflowExecutionRetentionPeriod: durationpb.New(retention),
		})
		var already *serviceerror.NamespaceAlreadyExists
		switch {
		case err == nil:
			rep.CreatedNamespace = true
		case errors.As(err, &already):
			// Another setup registered it first.
		default:
			return rep, fmt.Errorf("temporal setup: register namespace %q: %w", namespace, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var missing *serviceerror.NamespaceNotFound
	for {
		added, err := addSearchAttributes(ctx, c, namespace)
		rep.AddedAttributes = added
		if err != nil && !errors.As(err, &missing) {
			return rep, err
		}
		if err == nil {
			break
		}
		// The namespace is registered but not yet known everywhere.
		select {
		case <-ctx.Done():
			return rep, fmt.Errorf("temporal setup: namespace %q registered but not ready: %w", namespace, err)
		case <-time.After(setupPoll):
		}
	}
	began := time.Now()
	err = awaitAttributes(ctx, c, namespace)
	rep.Waited = time.Since(began)
	return rep, err
}

// setupPoll is how often Setup asks again while the cluster catches up.
const setupPoll = 500 * time.Millisecond

// probeQueue is the task queue of Setup's probe: no worker polls it, so
// the probe never runs; it is terminated as soon as it is accepted.
const probeQueue = "gonogo-setup-probe"

// awaitAttributes starts probes that use gonogo's search attributes until
// the cluster accepts one (and terminates it), or ctx ends.
func awaitAttributes(ctx context.Context, dialed client.Client, namespace string) error {
	// The probe runs in namespace, which need not be the one c was dialed
	// for.
	c, err := client.NewClientFromExisting(dialed, client.Options{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("temporal setup: a client of namespace %q: %w", namespace, err)
	}
	defer c.Close()
	attrs := temporal.NewSearchAttributes(stateKey.ValueSet(string(engine.RunRunning)),
		starterKey.ValueSet("gonogo temporal setup"), channelKey.ValueSet(""))
	for {
		id := fmt.Sprintf("gonogo-setup-probe-%d", time.Now().UnixNano())
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: probeQueue,
			TypedSearchAttributes: attrs, WorkflowExecutionTimeout: time.Minute}, probeQueue)
		if err == nil {
			if terr := c.TerminateWorkflow(ctx, id, run.GetRunID(), "gonogo temporal setup: probe accepted"); terr != nil {
				return fmt.Errorf("temporal setup: end the probe workflow %s: %w", id, terr)
			}
			return nil
		}
		var missing *serviceerror.NamespaceNotFound
		if missingAttributes(err) == err && !errors.As(err, &missing) {
			return fmt.Errorf("temporal setup: start a probe workflow in %q: %w", namespace, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("temporal setup: the search attributes of %q were added, but the cluster did not accept a run using them in time: %w", namespace, err)
		case <-time.After(setupPoll):
		}
	}
}

// addSearchAttributes adds gonogo's search attributes that namespace
// lacks and returns their names.
func addSearchAttributes(ctx context.Context, c Namespaces, namespace string) ([]string, error) {
	have, err := searchAttributes(ctx, c, namespace)
	if err != nil {
		return nil, fmt.Errorf("temporal setup: list search attributes of %q: %w", namespace, err)
	}
	add := map[string]enumspb.IndexedValueType{}
	for _, g := range attributeGaps(have) {
		if g.Present {
			return nil, fmt.Errorf("temporal setup: namespace %q has search attribute %s of type %s; gonogo needs %s",
				namespace, g.Name, g.Have, g.Want)
		}
		add[g.Name] = g.Want
	}
	if len(add) == 0 {
		return nil, nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: add})
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return nil, fmt.Errorf("temporal setup: add search attributes to %q: %w", namespace, err)
	}
	return slices.Sorted(maps.Keys(add)), nil
}
