package temporalbackend

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// Namespaces is the part of a Temporal client that reads and changes a
// namespace and its search attributes; client.Client has it.
type Namespaces interface {
	WorkflowService() workflowservice.WorkflowServiceClient
	OperatorService() operatorservice.OperatorServiceClient
}

// Readiness is how a namespace stands against what gonogo needs of it: to
// exist, with each of SearchAttributes under its type. gonogo doctor
// reports it; Setup makes it so.
type Readiness struct {
	Namespace string
	Exists    bool
	// Lacking are gonogo's search attributes the namespace does not have
	// under the type gonogo needs, by name; not asked when !Exists.
	Lacking []AttributeGap
}

// Ready says the namespace needs nothing more for gonogo.
func (r Readiness) Ready() bool { return r.Exists && len(r.Lacking) == 0 }

// An AttributeGap is one of gonogo's search attributes that a namespace
// lacks (Present false) or has under another type (Have).
type AttributeGap struct {
	Name    string
	Want    enumspb.IndexedValueType
	Have    enumspb.IndexedValueType
	Present bool
}

// CheckReadiness asks the cluster how namespace stands (see Readiness),
// changing nothing. An error is a question the cluster did not answer.
func CheckReadiness(ctx context.Context, c Namespaces, namespace string) (Readiness, error) {
	r := Readiness{Namespace: namespace}
	exists, err := namespaceExists(ctx, c, namespace)
	if err != nil || !exists {
		if err != nil {
			err = fmt.Errorf("namespace %s: %w", namespace, err)
		}
		return r, err
	}
	r.Exists = true
	have, err := searchAttributes(ctx, c, namespace)
	if err != nil {
		return r, fmt.Errorf("search attributes of %s: %w", namespace, err)
	}
	r.Lacking = attributeGaps(have)
	return r, nil
}

// namespaceExists asks whether the cluster has namespace.
func namespaceExists(ctx context.Context, c Namespaces, namespace string) (bool, error) {
	_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
	var missing *serviceerror.NamespaceNotFound
	if errors.As(err, &missing) {
		return false, nil
	}
	return err == nil, err
}

// searchAttributes are namespace's custom search attributes and their types.
func searchAttributes(ctx context.Context, c Namespaces, namespace string) (map[string]enumspb.IndexedValueType, error) {
	res, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, err
	}
	return res.GetCustomAttributes(), nil
}

// attributeGaps compares a namespace's custom search attributes (have)
// with gonogo's: the one rule of which attributes a namespace lacks.
func attributeGaps(have map[string]enumspb.IndexedValueType) []AttributeGap {
	want := SearchAttributes()
	var gaps []AttributeGap
	for _, name := range slices.Sorted(maps.Keys(want)) {
		t, ok := have[name]
		if !ok || t != want[name] {
			gaps = append(gaps, AttributeGap{Name: name, Want: want[name], Have: t, Present: ok})
		}
	}
	return gaps
}

// Probe asks one namespace of a cluster how ready it is for gonogo, and
// how many workers take steps there; it changes nothing (gonogo doctor).
type Probe struct {
	c         client.Client
	namespace string
}

// NewProbe asks about namespace through c; Close closes c.
func NewProbe(c client.Client, namespace string) *Probe {
	return &Probe{c: c, namespace: namespace}
}

// Readiness is CheckReadiness of the probe's namespace.
func (p *Probe) Readiness(ctx context.Context) (Readiness, error) {
	return CheckReadiness(ctx, p.c, p.namespace)
}

// StepWorkers is how many pollers take steps from StepQueue now.
func (p *Probe) StepWorkers(ctx context.Context) (int, error) {
	res, err := p.c.DescribeTaskQueue(ctx, StepQueue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
	if err != nil {
		return 0, err
	}
	return len(res.GetPollers()), nil
}

// Close closes the client.
func (p *Probe) Close() { p.c.Close() }

// Workers is how many workers poll the backend's queues now: runs
// (workflow tasks) and steps (activities). A run started while either is
// zero waits until a gonogo worker starts.
func (b *Backend) Workers(ctx context.Context) (flows, steps int, err error) {
	f, err := b.cfg.Client.DescribeTaskQueue(ctx, b.cfg.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil {
		return 0, 0, err
	}
	s, err := b.cfg.Client.DescribeTaskQueue(ctx, b.cfg.StepQueue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
	if err != nil {
		return 0, 0, err
	}
	return len(f.GetPollers()), len(s.GetPollers()), nil
}
