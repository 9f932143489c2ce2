package main

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/internal/web"
)

func newWebCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	var addr string
	c := &cobra.Command{
		Use:   "web [flags]",
		Short: "Serve the runs as web pages to read and decide on in a browser on this machine",
		Long: `Serve the runs of the data directory as web pages: the run list, and each run
with its steps, decisions, every attempt's artifact (rendered and raw, to
download), a diff between attempts, and its journal, updated as the run moves.
It works while another gonogo holds the data directory. A waiting step can be
decided on from its page (approve, skip, redo, abort, edit) and a run paused or
resumed, as gonogo decide, pause and resume do, recorded as you (GONOGO_ACTOR,
USER or LOGNAME).

It prints one sign-in link: it works once, for 10 minutes, and starts a session
of 12 hours in that browser. Sessions are kept in memory: stopping gonogo web
ends them. Ctrl-C stops it.

Exit codes: 0 stopped, 2 usage or I/O error (the address cannot be listened on).`,
		RunE: a.action(f, func(ctx context.Context, e env, cfg config, f *runFlags) int {
			return cmdWeb(ctx, e, cfg, f, addr)
		}),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	a.addDataFlag(c, f)
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "listen on `HOST:PORT` (port 0: any free port)")
	a.completeFlag(c, "addr", cobra.NoFileCompletions)
	return c
}

func cmdWeb(ctx context.Context, e env, cfg config, f *runFlags, addr string) int {
	if len(f.positional) > 0 {
		return fail(e, "web", usagef("takes no arguments (got %q)", f.positional[0]))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fail(e, "web", fmt.Errorf("listen on %s: %w", addr, err))
	}
	// Each request opens the runs anew and lets them go: serving pages
	// never keeps a store's lock from a gonogo run. Warnings that an open
	// prints (artifact files pending) are gonogo show's to give.
	quiet := e
	quiet.stderr = io.Discard
	srv := web.New(func(ctx context.Context) (web.Source, error) {
		return openReader(ctx, quiet, f.data)
	}, web.Options{
		Decide:  webDeciders(quiet, f.data),
		Actor:   actor(e),
		MaxEdit: int64(cfg.MaxArtifact),
	})
	link, err := srv.SignInURL("http://" + ln.Addr().String())
	if err != nil {
		ln.Close()
		return fail(e, "web", err)
	}
	fmt.Fprintf(e.stdout, "gonogo web: sign in at %s (works once, for 10 minutes)\n", link)
	if err := srv.Run(ctx, ln); err != nil {
		return fail(e, "web", err)
	}
	return terminal.ExitOK
}

// webDeciders opens, for each of the page's forms, what gonogo decide opens.
func webDeciders(e env, data string) web.OpenDecider {
	return func(ctx context.Context) (web.Decider, error) {
		dc, held, err := openDecider(ctx, e, data)
		if err != nil {
			return nil, err
		}
		p, ok := dc.(decidePauser)
		if !ok {
			_ = dc.Close()
			return nil, fmt.Errorf("no way to decide on a run in %s", data)
		}
		return webDecider{decidePauser: p, held: held, data: data}, nil
	}
}

// decidePauser is what openDecider returns for every place a run can be
// decided on.
type decidePauser interface {
	decider
	pauser
}

// webDecider takes the page's decisions where gonogo decide, pause and
// resume take theirs, opened for one request.
type webDecider struct {
	decidePauser
	held bool
	data string
}

// Decide applies d as gonogo decide does. An edit, which decide does not
// make, is recorded in a store no gonogo holds; a gonogo holding it takes
// edits in its own terminal or Slack.
func (w webDecider) Decide(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (*engine.Run, bool, error) {
	if d.Kind == engine.DecideEdit {
		sd, ok := w.decidePauser.(storeDecider)
		if !ok {
			return nil, false, fmt.Errorf("an edit is not taken from this page while %s carries out the run: edit in the terminal or Slack that runs the step", orHolder(holderName(w.decidePauser, w.held)))
		}
		r, err := sd.svc.Record(ctx, id, d, body)
		return r, false, err
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
func (w webDecider) Unpause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, bool, error) {
	return w.decidePauser.Unpause(ctx, id, actor, "")
}

func orHolder(name string) string {
	if name == "" {
		return "another gonogo"
	}
	return name
}
