package terminal

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// ErrInterrupted is the cause of a prompt's context that Ctrl-C ended.
var ErrInterrupted = errors.New("interrupted")

// Interrupts routes Ctrl-C. Normally it stops gonogo (it cancels the
// process context, as SIGTERM always does); while a prompt that can be
// backed out of has caught it (the redo feedback, $EDITOR, the question
// after an unchanged edit), Ctrl-C only ends that prompt, and the next one
// stops gonogo.
type Interrupts struct {
	mu     sync.Mutex
	stop   context.CancelFunc
	caught context.CancelCauseFunc // the prompt Ctrl-C ends, if one listens
}

type interruptsKey struct{}

// WithInterrupts returns a context that SIGTERM, and Ctrl-C outside a
// prompt that caught it, cancel. stop releases the signals.
func WithInterrupts(parent context.Context) (ctx context.Context, stop func()) {
	ctx, ir := NewInterrupts(parent)
	cancel := ir.stop
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case s := <-sig:
				if s == syscall.SIGTERM {
					cancel()
				} else {
					ir.Interrupt()
				}
			case <-ctx.Done():
				// Stopping already: one more Ctrl-C ends gonogo at once.
				signal.Stop(sig)
				return
			}
		}
	}()
	return ctx, func() {
		cancel()
		<-done
	}
}

// NewInterrupts returns a context that ir.interrupt cancels unless a
// prompt caught it, with no signal attached (withInterrupts adds them).
func NewInterrupts(parent context.Context) (context.Context, *Interrupts) {
	ctx, cancel := context.WithCancel(parent)
	ir := &Interrupts{stop: cancel}
	return context.WithValue(ctx, interruptsKey{}, ir), ir
}

// Interrupt is what Ctrl-C does: end the prompt that caught it, or stop.
func (ir *Interrupts) Interrupt() {
	ir.mu.Lock()
	defer ir.mu.Unlock()
	if c := ir.caught; c != nil {
		ir.caught = nil
		c(ErrInterrupted)
		return
	}
	ir.stop()
}

// CatchInterrupt returns a context for a prompt that Ctrl-C ends (with
// cause errInterrupted) instead of stopping gonogo, and a release that
// must be called once the prompt is over. Without a router in ctx (gonogo
// run in-process by a test) Ctrl-C cannot happen, and ctx is returned.
func CatchInterrupt(ctx context.Context) (context.Context, func()) {
	ir, _ := ctx.Value(interruptsKey{}).(*Interrupts)
	pctx, cancel := context.WithCancelCause(ctx)
	if ir == nil {
		return pctx, func() { cancel(nil) }
	}
	ir.mu.Lock()
	ir.caught = cancel
	ir.mu.Unlock()
	return pctx, func() {
		ir.mu.Lock()
		ir.caught = nil
		ir.mu.Unlock()
		cancel(nil)
	}
}

// WasInterrupted says whether Ctrl-C ended the prompt of pctx.
func WasInterrupted(pctx context.Context) bool {
	return errors.Is(context.Cause(pctx), ErrInterrupted)
}
