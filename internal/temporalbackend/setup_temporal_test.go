//go:build temporal

package temporalbackend

import (
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/temporal"
	"go.temporal.io/server/temporaltest"
)

func TestSetupCreatesTheNamespaceAndItsSearchAttributesOnce(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	c := ts.GetDefaultClient()
	ctx := t.Context()

	// What doctor asks, before and after: the readiness Setup brings.
	if r, err := CheckReadiness(ctx, c, "gonogo-setup"); err != nil || r.Exists || r.Ready() {
		t.Fatalf("before setup: %+v, %v; want no namespace", r, err)
	}
	rep, err := Setup(ctx, c, "gonogo-setup", 72*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{AttrChannel, AttrStarter, AttrState}
	if !rep.CreatedNamespace || !slices.Equal(rep.AddedAttributes, want) {
		t.Errorf("first setup: %+v; want the namespace created and %v added", rep, want)
	}
	ns, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "gonogo-setup"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ns.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration(); got != 72*time.Hour {
		t.Errorf("retention %v, want 72h", got)
	}
	attrs, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "gonogo-setup"})
	if err != nil {
		t.Fatal(err)
	}
	for name, typ := range SearchAttributes() {
		if got := attrs.GetCustomAttributes()[name]; got != typ {
			t.Errorf("search attribute %s is %s, want %s", name, got, typ)
		}
	}

	if r, err := CheckReadiness(ctx, c, "gonogo-setup"); err != nil || !r.Ready() {
		t.Errorf("after setup: %+v, %v; want ready", r, err)
	}

	again, err := Setup(ctx, c, "gonogo-setup", 72*time.Hour)
	if err != nil {
		t.Fatalf("second setup: %v", err)
	}
	if again.CreatedNamespace || len(again.AddedAttributes) != 0 {
		t.Errorf("second setup changed something: %+v", again)
	}
}

func TestSetupRefusesASearchAttributeOfAnotherType(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	c := ts.GetDefaultClient()
	ctx := t.Context()
	ns := ts.GetDefaultNamespace()
	_, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: ns, SearchAttributes: map[string]enumspb.IndexedValueType{AttrState: enumspb.INDEXED_VALUE_TYPE_INT}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Setup(ctx, c, ns, DefaultRetention)
	if err == nil || !strings.Contains(err.Error(), AttrState) || !strings.Contains(err.Error(), "Int") {
		t.Fatalf("setup over an Int %s: %v; want an error naming the attribute and its type", AttrState, err)
	}
	r, err := CheckReadiness(ctx, c, ns)
	i := slices.IndexFunc(r.Lacking, func(g AttributeGap) bool { return g.Name == AttrState })
	if err != nil || r.Ready() || i < 0 || !r.Lacking[i].Present || r.Lacking[i].Have != enumspb.INDEXED_VALUE_TYPE_INT {
		t.Errorf("readiness over an Int %s: %+v, %v; want it lacking, present as Int", AttrState, r, err)
	}
}

// On a cluster as it ships (the search attributes' cache refreshed every
// few seconds, not on every read as temporaltest sets it), a run started
// the moment setup returns is accepted: setup waits until the cluster
// takes runs that use gonogo's search attributes, and says how long.
func TestARunStartedRightAfterSetupIsAccepted(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t), temporaltest.WithBaseServerOptions(
		temporal.WithDynamicConfigClient(dynamicconfig.StaticClient{
			dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): []dynamicconfig.ConstrainedValue{{Value: false}},
		})))
	const ns = "gonogo-fresh"
	c := ts.NewClientWithOptions(client.Options{Namespace: ns})
	rep, err := Setup(t.Context(), c, ns, DefaultRetention)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.CreatedNamespace || len(rep.AddedAttributes) != 3 {
		t.Fatalf("setup: %+v; want the namespace created and three attributes added", rep)
	}
	e := temporalEnvOn(t, ts)
	e.b = New(e.config(func(cfg *Config) { cfg.Client = c }))
	r, err := e.tryStart(nil)
	if err != nil {
		t.Fatalf("a run started as setup returned (it waited %s): %v", rep.Waited, err)
	}
	t.Logf("setup waited %s; run %s accepted", rep.Waited, r.ID)
	// The probe setup started is not left behind.
	list, err := c.ListWorkflow(t.Context(), &workflowservice.ListWorkflowExecutionsRequest{Namespace: ns, Query: "WorkflowType = '" + probeQueue + "'"})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range list.GetExecutions() {
		if w.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			t.Errorf("setup's probe %s is still running", w.GetExecution().GetWorkflowId())
		}
	}
}
