package temporalbackend

import (
	"context"
	"fmt"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// NoWorkerNote says, when no gonogo worker polls the cluster at addr
// (namespace ns) now, that run id waits for one and how to start one and
// follow the run again; "" when workers poll or the cluster cannot say,
// which is not guessed about.
func (b *Backend) NoWorkerNote(ctx context.Context, addr, ns string, id engine.RunID) string {
	flows, steps, err := b.Workers(ctx)
	if err != nil || flows > 0 && steps > 0 {
		return ""
	}
	return fmt.Sprintf("No gonogo worker polls Temporal at %s (namespace %s) now: the run waits until one starts.\n"+
		"Start one with: gonogo worker (with the same GONOGO_TEMPORAL_ADDR and GONOGO_TEMPORAL_NAMESPACE)\n"+
		"Ctrl-C leaves the run on the cluster; follow it again with: gonogo resume %s\n", addr, ns, id)
}

// FollowWhile follows the run from stands (see Follow) in a goroutine,
// telling box, through the notifier wrap makes of it, each change; a
// follow that fails is told to box as a notice's error. stop ends the
// follow and waits for it.
func (b *Backend) FollowWhile(ctx context.Context, from *engine.Run, every time.Duration, wrap func(context.Context, engine.Notifier) engine.Notifier, box engine.Notifier) (stop func()) {
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := b.Follow(fctx, from, every, wrap(fctx, box)); err != nil && fctx.Err() == nil {
			box.Notify(engine.Notice{Run: from, Err: fmt.Errorf("follow the run on the cluster: %w", err)})
		}
	}()
	return func() { cancel(); <-done }
}
