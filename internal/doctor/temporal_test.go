package doctor

import (
	"context"
	"errors"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gonogo/gonogo/internal/temporalbackend"
)

// fakeCluster answers as a cluster would, and counts what doctor asks.
type fakeCluster struct {
	readiness  temporalbackend.Readiness
	readyErr   error
	workers    int
	workersErr error
	asked      int // questions after the readiness one
	closed     bool
}

func (f *fakeCluster) Readiness(context.Context) (temporalbackend.Readiness, error) {
	return f.readiness, f.readyErr
}

func (f *fakeCluster) StepWorkers(context.Context) (int, error) {
	f.asked++
	return f.workers, f.workersErr
}

func (f *fakeCluster) Close() { f.closed = true }

func TestCheckTemporalSaysHowTheClusterStands(t *testing.T) {
	lacking := temporalbackend.Readiness{Namespace: "gonogo", Exists: true, Lacking: []temporalbackend.AttributeGap{
		{Name: "GonogoChannel", Want: enumspb.INDEXED_VALUE_TYPE_KEYWORD},
		{Name: "GonogoState", Want: enumspb.INDEXED_VALUE_TYPE_KEYWORD, Have: enumspb.INDEXED_VALUE_TYPE_INT, Present: true},
	}}
	ready := temporalbackend.Readiness{Namespace: "gonogo", Exists: true}
	cases := []struct {
		name    string
		cluster *fakeCluster
		dialErr error
		want    Temporal
	}{
		{"unreachable", nil, errors.New("cannot reach Temporal"), Temporal{Problem: "cannot reach Temporal"}},
		{"unanswered", &fakeCluster{readyErr: errors.New("namespace gonogo: timeout")},
			nil, Temporal{Reachable: true, Problem: "namespace gonogo: timeout"}},
		{"no namespace", &fakeCluster{readiness: temporalbackend.Readiness{Namespace: "gonogo"}},
			nil, Temporal{Reachable: true, Problem: "namespace gonogo does not exist: run gonogo temporal setup"}},
		{"lacking attributes", &fakeCluster{readiness: lacking},
			nil, Temporal{Reachable: true, Problem: "namespace gonogo lacks gonogo's search attributes GonogoChannel, GonogoState: run gonogo temporal setup"}},
		{"ready", &fakeCluster{readiness: ready, workers: 3}, nil, Temporal{Reachable: true, Ready: true, Workers: 3}},
		{"ready, workers unknown", &fakeCluster{readiness: ready, workersErr: errors.New("denied")}, nil, Temporal{Reachable: true, Ready: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tc := &TemporalConfig{Addr: "localhost:7233", Namespace: "gonogo", Heartbeat: 10 * time.Second,
				Dial: func(ctx context.Context) (Cluster, error) {
					if _, ok := ctx.Deadline(); !ok {
						t.Error("doctor dials without a deadline")
					}
					if c.dialErr != nil {
						return nil, c.dialErr
					}
					return c.cluster, nil
				}}
			got := checkTemporal(t.Context(), tc)
			c.want.Addr, c.want.Namespace, c.want.Heartbeat = "localhost:7233", "gonogo", "10s"
			if got == nil || *got != c.want {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
			if c.cluster == nil {
				return
			}
			if !c.cluster.closed {
				t.Error("doctor left the client open")
			}
			// Workers are asked about only on a ready namespace.
			if asked := c.cluster.asked > 0; asked != c.want.Ready {
				t.Errorf("asked for workers %d times, ready %v", c.cluster.asked, c.want.Ready)
			}
		})
	}
}

func TestCheckTemporalWithoutACluster(t *testing.T) {
	if got := checkTemporal(t.Context(), nil); got != nil {
		t.Errorf("no cluster named: %+v, want none", got)
	}
	bad := &TemporalConfig{Err: errors.New("GONOGO_TEMPORAL_HEARTBEAT is 1s"), Addr: "localhost:7233",
		Dial: func(context.Context) (Cluster, error) {
			t.Error("dialled a cluster whose configuration is wrong")
			return nil, nil
		}}
	if got := checkTemporal(t.Context(), bad); got == nil || *got != (Temporal{Problem: "GONOGO_TEMPORAL_HEARTBEAT is 1s"}) {
		t.Errorf("a wrong configuration: %+v", got)
	}
}
