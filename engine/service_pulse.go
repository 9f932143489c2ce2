package engine

import "time"

// Pulse is what a store may keep besides Store: the last time the gonogo
// holding it was alive while it ran steps. The service tells it every
// PulseEvery while a step runs; when the store next opens after that gonogo
// stopped, the last pulse is the interrupted attempts' last sign of life
// (Recover's pulse). Nothing decides on it, so a pulse need not be durable:
// Alive is cheap (no fsync, a pulse is at worst lost in a power cut, and an
// earlier one stands), and failing to keep one is not an error.
type Pulse interface {
	Alive(at time.Time)
}

// PulseEvery is how often the service tells a Pulse it is alive while a
// step runs: an interrupted attempt's loss is known to this much.
const PulseEvery = 5 * time.Second

// pulse tells the store, if it keeps a Pulse, that gonogo is alive every
// PulseEvery until stop is called; stop returns once the pulse has stopped.
// A pulse runs while its step runs, so it is not owed to Run: it ends with
// the execution that started it.
func (s *Service) pulse() (stop func()) {
	p, ok := s.store.(Pulse)
	if !ok {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(PulseEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.Alive(s.now())
			case <-quit:
				return
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}
