package bot

import (
	"context"
	"sync"
	"testing"
)

// A pop whose context has ended still returns an item promised before the
// end and pushed after it, and ends only once no promise is left; every
// waiting pop ends then, not only one.
func TestQueuePopWaitsForWhatWasPromised(t *testing.T) {
	q := newQueue[int]()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	q.expect()
	q.expect()
	got := make(chan int, 4)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for {
				v, ok := q.pop(ctx)
				if !ok {
					return
				}
				got <- v
			}
		})
	}
	q.pushPromised(7)
	q.giveUp()
	wg.Wait()
	close(got)
	var vs []int
	for v := range got {
		vs = append(vs, v)
	}
	if len(vs) != 1 || vs[0] != 7 {
		t.Errorf("popped %v after the context ended, want the promised 7", vs)
	}
}
