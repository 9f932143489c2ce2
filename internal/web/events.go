package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// events streams a run's changes to its page (server-sent events): an
// event named change, its data the run's last journal seq, each time the
// run's journal is found past the seq the page was rendered at (?after=,
// the page's data-seq). It looks at once when a form of this server
// changed the run, else every PollEvery, and ends when the client goes,
// or when the run cannot be read any more.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(r)
	after, err := strconv.ParseUint(r.URL.Query().Get("after"), 10, 64)
	if !ok || err != nil {
		http.NotFound(w, r)
		return
	}
	flush := http.NewResponseController(w)
	woke := s.follow.wake(id)
	seq, err := s.seq(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(s.poll)
	defer tick.Stop()
	for {
		if seq != after {
			after = seq
			if _, err := fmt.Fprintf(w, "event: change\ndata: %d\n\n", seq); err != nil {
				return
			}
		}
		if err := flush.Flush(); err != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		case <-woke:
		}
		woke = s.follow.wake(id)
		if seq, err = s.seq(r.Context(), id); err != nil {
			if !errors.Is(err, context.Canceled) {
				s.log.Warn("follow a run", "run", id, "err", err)
			}
			return
		}
	}
}

// seq is run id's last journal seq, as the runs read now.
func (s *Server) seq(ctx context.Context, id engine.RunID) (uint64, error) {
	src, err := s.open(ctx)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	r, err := src.Load(ctx, id)
	if err != nil {
		return 0, err
	}
	return r.Seq, nil
}
