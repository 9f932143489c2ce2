package datadir

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/internal/terminal"
)

// Decider is where a decision goes: the gonogo holding the data directory,
// or the store itself when nobody holds it.
type Decider interface {
	Reader
	// Decide applies d; carried reports whether the run goes on from it
	// now (else with gonogo resume).
	Decide(ctx context.Context, id engine.RunID, d engine.Decision) (r *engine.Run, carried bool, err error)
}

// Pauser is where a pause or a resume goes: the gonogo holding the data
// directory, the store itself when nobody holds it, or the run's workflow
// on a Temporal cluster.
type Pauser interface {
	Reader
	Pause(ctx context.Context, id engine.RunID, actor string) (r *engine.Run, carried bool, err error)
	Unpause(ctx context.Context, id engine.RunID, actor string, m engine.Mode) (r *engine.Run, carried bool, err error)
}

// decidePauser is what OpenDecider returns for every place a run can be
// decided on; a reader that is one already (the local API of the gonogo
// holding the store, a Temporal cluster's reader) decides itself.
type decidePauser interface {
	Decider
	Pauser
}

// describer names who carries out a run in pause's and decide's answers.
type describer interface{ Describe() string }

// Where says where the runs are, for a run that is not there: a cluster's
// reader says where it reads.
func Where(rd Reader, data string) string {
	if c, ok := rd.(interface{ Where() string }); ok {
		return c.Where()
	}
	return "in " + data
}

// HolderName names the gonogo that holds the data directory, for a reader
// opened held ("" when not held).
func HolderName(rd Reader, held bool) string {
	if c, ok := rd.(describer); ok && held {
		return c.Describe()
	}
	return ""
}

// storeDecider records decisions in a store no gonogo holds: the run goes
// on from them when it is next resumed.
type storeDecider struct {
	Store
	svc localapi.Recorder
}

func (s storeDecider) Decide(ctx context.Context, id engine.RunID, d engine.Decision) (*engine.Run, bool, error) {
	r, err := s.svc.Record(ctx, id, d, nil)
	return r, false, err
}

// Pause records a pause in a store no gonogo holds.
func (s storeDecider) Pause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, bool, error) {
	r, err := s.svc.Pause(ctx, id, actor)
	return r, false, err
}

// Unpause records a resume in a store no gonogo holds; the run goes on
// with gonogo resume.
func (s storeDecider) Unpause(ctx context.Context, id engine.RunID, actor string, m engine.Mode) (*engine.Run, bool, error) {
	r, err := s.svc.RecordUnpause(ctx, id, actor, m)
	return r, false, err
}

// OpenDecider is where a decision on the runs rd reads (as the command
// opened them) goes; held reports that a gonogo or a cluster carries the
// runs out. It closes rd when it refuses.
func OpenDecider(rd Reader, data string) (Decider, bool, error) {
	switch rd := rd.(type) {
	case NoStore:
		return rd, false, nil
	case Store:
		if rd.ReadOnly() {
			_ = rd.Close()
			return nil, false, fmt.Errorf("cannot record anything in %s: you may read this store but not write it (another user's store, or a read-only mount); act as a user who can write it", data)
		}
		svc := engine.NewService(engine.ServiceConfig{Store: rd.DB, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Members: engine.LocalOperator})
		return storeDecider{Store: rd, svc: svc}, false, nil
	case decidePauser:
		return rd, true, nil
	}
	_ = rd.Close()
	return nil, false, fmt.Errorf("no way to record a decision in %s", data)
}

// OpenPauser is where a pause or a resume of the runs rd reads goes, as
// OpenDecider opens it.
func OpenPauser(rd Reader, data string) (Pauser, bool, error) {
	dc, held, err := OpenDecider(rd, data)
	if err != nil {
		return nil, false, err
	}
	p, ok := dc.(Pauser)
	if !ok {
		_ = dc.Close()
		return nil, false, fmt.Errorf("no way to pause a run in %s", data)
	}
	return p, held, nil
}

// OpenActs is where the run web page's decisions, pauses and resumes on
// the runs rd reads go, as OpenDecider opens it, for one request.
func OpenActs(rd Reader, data string) (*Acts, error) {
	dc, held, err := OpenDecider(rd, data)
	if err != nil {
		return nil, err
	}
	p, ok := dc.(decidePauser)
	if !ok {
		_ = dc.Close()
		return nil, fmt.Errorf("no way to decide on a run in %s", data)
	}
	return &Acts{decidePauser: p, held: held, data: data}, nil
}

// Acts takes the page's decisions where gonogo decide, pause and resume
// take theirs, opened for one request.
type Acts struct {
	decidePauser
	held bool
	data string
}

// editor takes an edit with its replacement artifact: the local API of
// the gonogo holding the data directory does.
type editor interface {
	Edit(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (*engine.Run, bool, error)
}

// Decide applies d as gonogo decide does. An edit, which decide does not
// make, is recorded in a store no gonogo holds, and sent to the gonogo
// holding it, which applies it as an edit typed in its own terminal or
// Slack.
func (w *Acts) Decide(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (*engine.Run, bool, error) {
	if d.Kind == engine.DecideEdit {
		switch dp := w.decidePauser.(type) {
		case storeDecider:
			r, err := dp.svc.Record(ctx, id, d, body)
			return r, false, err
		case editor:
			return dp.Edit(ctx, id, d, body)
		}
		return nil, false, fmt.Errorf("an edit is not taken from this page while %s carries out the run: edit in the terminal or Slack that runs the step", orHolder(HolderName(w.decidePauser, w.held)))
	}
	if !w.held && d.Kind == engine.DecideApprove {
		r, err := w.Load(ctx, id)
		if err != nil {
			return nil, false, err
		}
		if s := r.Step(d.Step); s != nil {
			if err := terminal.NeedsHolder(r, s, d.Kind, w.held, w.data); err != nil {
				return nil, false, err
			}
		}
	}
	return w.decidePauser.Decide(ctx, id, d)
}

// Unpause resumes the run in its own mode, as gonogo resume without
// --checkpointed does.
func (w *Acts) Unpause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, bool, error) {
	return w.decidePauser.Unpause(ctx, id, actor, "")
}

func orHolder(name string) string {
	if name == "" {
		return "another gonogo"
	}
	return name
}
