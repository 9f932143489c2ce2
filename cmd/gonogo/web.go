package main

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/internal/datadir"
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
download), a diff between attempts, its journal, and its audit trail to download
(the JSON or Markdown gonogo export writes), updated as the run moves.
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
		Data:    f.data,
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
		rd, err := openReader(ctx, e, data)
		if err != nil {
			return nil, err
		}
		a, err := datadir.OpenActs(rd, data)
		if err != nil {
			return nil, err
		}
		return a, nil
	}
}
