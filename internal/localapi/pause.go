package localapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// wirePause is a pause or a resume sent to the holder: who, and for a
// resume the mode the run goes on in ("" its own).
type wirePause struct {
	Actor string `json:"actor"`
	Mode  string `json:"mode,omitempty"`
}

func readPause(w http.ResponseWriter, r *http.Request) (wirePause, engine.Mode, bool) {
	var in wirePause
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "bad-request", "pause: "+err.Error())
		return in, "", false
	}
	if in.Actor == "" {
		writeError(w, http.StatusBadRequest, "bad-request", "a pause or a resume needs an actor")
		return in, "", false
	}
	var m engine.Mode
	if in.Mode != "" {
		var err error
		if m, err = engine.ParseMode(in.Mode); err != nil {
			writeError(w, http.StatusBadRequest, "bad-request", err.Error())
			return in, "", false
		}
	}
	return in, m, true
}

// pause holds a run this gonogo carries (or records the pause of one it
// does not: nothing of it runs here).
func (a *Server) pause(w http.ResponseWriter, r *http.Request) {
	in, _, ok := readPause(w, r)
	if !ok {
		return
	}
	id := engine.RunID(r.PathValue("id"))
	run, err := a.svc.Pause(context.WithoutCancel(r.Context()), id, in.Actor)
	a.answerPause(w, run, err, a.carriesOut(id))
}

// resume resumes a paused run and, when this gonogo carries it, goes on
// with it.
func (a *Server) resume(w http.ResponseWriter, r *http.Request) {
	in, m, ok := readPause(w, r)
	if !ok {
		return
	}
	id := engine.RunID(r.PathValue("id"))
	unpause, carried := a.svc.RecordUnpause, a.carriesOut(id)
	if carried {
		unpause = a.svc.Unpause
	}
	run, err := unpause(context.WithoutCancel(r.Context()), id, in.Actor, m)
	a.answerPause(w, run, err, carried)
}

func (a *Server) answerPause(w http.ResponseWriter, run *engine.Run, err error, carried bool) {
	if err != nil {
		a.fail(w, err)
		return
	}
	b, err := record.MarshalRun(run, nil)
	if err == nil {
		b, err = json.Marshal(wireDecided{Run: b, CarriedOut: carried})
	}
	writeBody(w, b, err, a)
}

// Pause asks the holder to pause a run.
func (c *Client) Pause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, bool, error) {
	return c.pauseOrResume(ctx, runPath(id)+"/pause", wirePause{Actor: actor})
}

// Unpause asks the holder to resume a paused run in mode m ("" its own).
func (c *Client) Unpause(ctx context.Context, id engine.RunID, actor string, m engine.Mode) (*engine.Run, bool, error) {
	return c.pauseOrResume(ctx, runPath(id)+"/resume", wirePause{Actor: actor, Mode: string(m)})
}

func (c *Client) pauseOrResume(ctx context.Context, path string, in wirePause) (*engine.Run, bool, error) {
	b, err := c.do(ctx, http.MethodPost, path, in)
	if err != nil {
		return nil, false, err
	}
	var out wireDecided
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, false, fmt.Errorf("the gonogo holding %s: %s: %w", c.data, path, err)
	}
	r, _, err := record.UnmarshalRun(out.Run)
	return r, out.CarriedOut, err
}
