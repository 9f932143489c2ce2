//go:build temporal

package temporalbackend

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/backendtest"
)

// The Temporal backend keeps the backend contract, on a real in-process
// Temporal server with its workers: what the front ends call and read
// answers as on engine.Service over bbolt, from another process's client
// too, and its runs read the same once every worker has gone.
func TestBackendContract(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, parts backendtest.Parts) backendtest.Opened {
		ts := sharedServer(t)
		q := newQueues()
		arts := newMemArtifacts()
		acts := &Activities{Runner: parts.Runner, Catalog: parts.Catalog, Artifacts: arts}
		flows := ts.NewWorkerWithOptions(q.flows, func(r worker.Registry) { RegisterWorkflow(r) },
			worker.Options{StickyScheduleToStartTimeout: time.Second})
		steps := ts.NewWorkerWithOptions(q.steps, func(r worker.Registry) { RegisterSteps(r, acts) }, worker.Options{})
		stopWorkers := sync.OnceFunc(func() {
			flows.Stop()
			steps.Stop()
		})
		t.Cleanup(stopWorkers)
		cfg := Config{Client: ts.GetDefaultClient(), Artifacts: arts, Heartbeat: testHeartbeat, TaskQueue: q.flows, StepQueue: q.steps}

		// A front end hears of a run's changes by following it.
		ctx, cancel := context.WithCancel(context.Background())
		var follows sync.WaitGroup
		t.Cleanup(func() { cancel(); follows.Wait() })
		first := contractBackend{Backend: New(cfg), follow: func(b *Backend, id engine.RunID) {
			follows.Go(func() { _ = b.Follow(ctx, &engine.Run{ID: id}, 50*time.Millisecond, parts.Notifier) })
		}}
		// Another process dials the cluster with a client of its own.
		another := func() contractBackend {
			c := ts.NewClientWithOptions(client.Options{Logger: sdklog.NewStructuredLogger(
				slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))})
			t.Cleanup(c.Close)
			other := cfg
			other.Client = c
			return contractBackend{Backend: New(other)}
		}
		return backendtest.Opened{
			Backend: first,
			Other:   func() backendtest.Backend { return another() },
			Halt: func() backendtest.Reader {
				stopWorkers()
				return another()
			},
		}
	})
}

// contractBackend is the Backend as the contract's cases call it: a
// listing of the newest runs, and each run it starts followed.
type contractBackend struct {
	*Backend
	follow func(b *Backend, id engine.RunID)
}

func (c contractBackend) Start(ctx context.Context, p engine.Plan, opt engine.StartOptions) (*engine.Run, error) {
	r, err := c.Backend.Start(ctx, p, opt)
	if err == nil && c.follow != nil {
		c.follow(c.Backend, r.ID)
	}
	return r, err
}

func (c contractBackend) List(ctx context.Context) ([]engine.RunSummary, error) {
	return c.Backend.List(ctx, 200)
}
