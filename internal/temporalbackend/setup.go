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
	"google.golang.org/protobuf/types/known/durationpb"
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
}

// Setup makes namespace ready for gonogo: it registers the namespace when
// it is missing (keeping finished runs for retention) and adds the search
// attributes it lacks. It is safe to repeat and to run from several
// machines at once. A search attribute of the same name but another type
// is an error naming it: gonogo cannot list runs by it, and changing its
// type is the cluster operator's call.
//
// A namespace just registered takes a few seconds to reach every part of
// the cluster; Setup waits for it, up to ctx's deadline or a minute.
func Setup(ctx context.Context, c Namespaces, namespace string, retention time.Duration) (SetupReport, error) {
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
		if err == nil || !errors.As(err, &missing) {
			return rep, err
		}
		// The namespace is registered but not yet known everywhere.
		select {
		case <-ctx.Done():
			return rep, fmt.Errorf("temporal setup: namespace %q registered but not ready: %w", namespace, err)
		case <-time.After(500 * time.Millisecond):
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
