package temporalbackend

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

// StartWorkers polls c's task queues for gonogo worker: runs from
// TaskQueue, and steps from StepQueue, slots of them at a time, carried
// out by acts. stop stops both, steps first.
func StartWorkers(c client.Client, slots int, acts *Activities) (stop func(), err error) {
	runs := worker.New(c, TaskQueue, WorkflowWorkerOptions())
	RegisterWorkflow(runs)
	steps := worker.New(c, StepQueue, worker.Options{MaxConcurrentActivityExecutionSize: slots})
	RegisterSteps(steps, acts)
	if err := runs.Start(); err != nil {
		return nil, fmt.Errorf("poll task queue %s: %w", TaskQueue, err)
	}
	if err := steps.Start(); err != nil {
		runs.Stop()
		return nil, fmt.Errorf("poll task queue %s: %w", StepQueue, err)
	}
	return func() { steps.Stop(); runs.Stop() }, nil
}

// PollSlack polls SlackQueue on c for a serve replica until ctx ends: the
// thread syncs s carries out, and the envelopes carry carries out for a
// replica that kept them and died.
func PollSlack(ctx context.Context, c client.Client, s SlackSide, carry func(ctx context.Context, payload []byte, received time.Time) error) error {
	w := worker.New(c, SlackQueue, worker.Options{})
	RegisterSlack(w, s)
	RegisterInbox(w, carry)
	if err := w.Start(); err != nil {
		return fmt.Errorf("poll task queue %s: %w", SlackQueue, err)
	}
	<-ctx.Done()
	w.Stop()
	return nil
}
