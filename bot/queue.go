package bot

import (
	"context"
	"sync"
)

// queue is an unbounded FIFO: the Socket Mode consumer hands work to it and
// never blocks, so a slow Slack call can never stall the socket.
//
// An item may be promised before it is pushed (expect): the consumer
// acknowledges an envelope in a goroutine of its own and pushes it after,
// and a pop whose context has ended still waits for what was promised, so
// an envelope acknowledged just before the bot is told to stop is carried
// out, not lost between the ack and the push.
type queue[T any] struct {
	mu       sync.Mutex
	items    []T
	promised int // expected and neither pushed nor given up yet
	signal   chan struct{}
}

func newQueue[T any]() *queue[T] { return &queue[T]{signal: make(chan struct{}, 1)} }

func (q *queue[T]) push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.wake()
}

// expect promises one item; keep it with pushPromised or giveUp.
func (q *queue[T]) expect() {
	q.mu.Lock()
	q.promised++
	q.mu.Unlock()
}

// pushPromised pushes an item promised by expect.
func (q *queue[T]) pushPromised(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.promised--
	q.mu.Unlock()
	q.wake()
}

// giveUp withdraws a promise made by expect: that item will not come.
func (q *queue[T]) giveUp() {
	q.mu.Lock()
	q.promised--
	q.mu.Unlock()
	q.wake()
}

func (q *queue[T]) wake() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// pop waits for an item. Once ctx has ended it returns what is queued,
// then what was promised, and reports false only when neither is left.
func (q *queue[T]) pop(ctx context.Context) (T, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			v := q.items[0]
			var zero T
			q.items[0] = zero
			q.items = q.items[1:]
			more := len(q.items) > 0
			q.mu.Unlock()
			if more {
				q.wake()
			}
			return v, true
		}
		promised := q.promised > 0
		q.mu.Unlock()
		if ctx.Err() != nil {
			if !promised {
				q.wake() // the next waiting pop finds the same and ends too
				var zero T
				return zero, false
			}
			<-q.signal
			continue
		}
		select {
		case <-ctx.Done():
		case <-q.signal:
		}
	}
}

// drain takes every item queued, without waiting.
func (q *queue[T]) drain() []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}
