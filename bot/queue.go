package bot

import (
	"context"
	"sync"
)

// queue is an unbounded FIFO: the Socket Mode consumer hands work to it and
// never blocks, so a slow Slack call can never stall the socket.
type queue[T any] struct {
	mu     sync.Mutex
	items  []T
	signal chan struct{}
}

func newQueue[T any]() *queue[T] { return &queue[T]{signal: make(chan struct{}, 1)} }

func (q *queue[T]) push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// pop waits for an item or for ctx to end.
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
				select {
				case q.signal <- struct{}{}:
				default:
				}
			}
			return v, true
		}
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			var zero T
			return zero, false
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
