package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/gonogo/gonogo/internal/temporalbackend"
	"github.com/gonogo/gonogo/internal/terminal"
)

// doctorTemporal is what gonogo doctor finds of the Temporal cluster
// GONOGO_TEMPORAL_ADDR names; absent when it names none.
type doctorTemporal struct {
	Addr      string `json:"addr"`
	Namespace string `json:"namespace"`
	Reachable bool   `json:"reachable"`
	// Ready: the namespace exists with gonogo's search attributes.
	Ready bool `json:"ready"`
	// Workers is how many pollers take steps from gonogo-steps now.
	Workers int `json:"workers"`
	// Heartbeat is GONOGO_TEMPORAL_HEARTBEAT: how long runs started here
	// trust a silent step worker.
	Heartbeat string `json:"heartbeat"`
	Problem   string `json:"problem,omitempty"`
}

// doctorTemporalWait bounds doctor's questions to the cluster.
const doctorTemporalWait = 5 * time.Second

func diagnoseTemporal(ctx context.Context, e env) *doctorTemporal {
	tc, err := loadTemporalConfig(ctx, e)
	if err != nil {
		return &doctorTemporal{Problem: err.Error()}
	}
	if tc.Addr == "" {
		return nil
	}
	d := &doctorTemporal{Addr: tc.Addr, Namespace: tc.Namespace, Heartbeat: tc.Heartbeat.String()}
	ctx, cancel := context.WithTimeout(ctx, doctorTemporalWait)
	defer cancel()
	c, err := dialTemporal(ctx, tc, quietLogger(e))
	if err != nil {
		d.Problem = err.Error()
		return d
	}
	defer c.Close()
	d.Reachable = true
	_, err = c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: tc.Namespace})
	var missing *serviceerror.NamespaceNotFound
	switch {
	case errors.As(err, &missing):
		d.Problem = fmt.Sprintf("namespace %s does not exist: run gonogo temporal setup", tc.Namespace)
		return d
	case err != nil:
		d.Problem = fmt.Sprintf("namespace %s: %v", tc.Namespace, err)
		return d
	}
	attrs, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: tc.Namespace})
	if err != nil {
		d.Problem = fmt.Sprintf("search attributes of %s: %v", tc.Namespace, err)
		return d
	}
	want := temporalbackend.SearchAttributes()
	var lacking []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if attrs.GetCustomAttributes()[name] != want[name] {
			lacking = append(lacking, name)
		}
	}
	if len(lacking) > 0 {
		d.Problem = fmt.Sprintf("namespace %s lacks gonogo's search attributes %s: run gonogo temporal setup", tc.Namespace, strings.Join(lacking, ", "))
		return d
	}
	d.Ready = true
	if res, err := c.DescribeTaskQueue(ctx, temporalbackend.StepQueue, enumspb.TASK_QUEUE_TYPE_ACTIVITY); err == nil {
		d.Workers = len(res.GetPollers())
	}
	return d
}

func temporalLine(t *doctorTemporal) string {
	switch {
	case t.Problem != "" && t.Addr == "":
		return "PROBLEM: " + t.Problem
	case t.Problem != "":
		return fmt.Sprintf("%s, namespace %s: PROBLEM: %s", t.Addr, t.Namespace, t.Problem)
	case t.Workers == 0:
		return fmt.Sprintf("%s, namespace %s: ready; no gonogo worker takes steps now (runs wait until one starts: gonogo worker); %s", t.Addr, t.Namespace, t.heartbeatWords())
	}
	verb := "takes"
	if t.Workers > 1 {
		verb = "take"
	}
	return fmt.Sprintf("%s, namespace %s: ready; %s %s steps; %s", t.Addr, t.Namespace, terminal.Plural(t.Workers, "worker"), verb, t.heartbeatWords())
}

func (t *doctorTemporal) heartbeatWords() string {
	return "runs started here take a step worker silent " + t.Heartbeat + " for lost (GONOGO_TEMPORAL_HEARTBEAT)"
}
