package main

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/gonogo/gonogo/bot"
	settings "github.com/gonogo/gonogo/internal/config"
	"github.com/gonogo/gonogo/internal/health"
	"github.com/gonogo/gonogo/internal/temporalbackend"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/internal/web"
	"github.com/gonogo/gonogo/storage/artifacts"
)

// On Temporal, gonogo serve is a stateless Slack front end, and any number
// of replicas of it may share one Slack app (Socket Mode spreads the
// envelopes across their connections):
//
//   - An envelope is kept, before it is acknowledged, by starting a
//     workflow keyed by its envelope id (temporalbackend.Inbox): an
//     envelope Slack sends again to another replica is acknowledged there
//     and not carried out twice. The replica that kept it carries it out
//     and marks it done; one it does not mark done in time (the replica
//     died) is carried out by the replicas' Slack task queue.
//   - A run's thread is synced by an activity its workflow schedules on
//     the Slack task queue (gonogo-slack), which every replica polls: one
//     sync of a run at a time across the replicas, and a sync cut off by
//     a replica's death is carried on by another, which first looks in
//     Slack for what the cut-off one posted.
//   - Steps run on the workers (gonogo worker), never in serve.
//
// A replica keeps nothing of its own on disk. It reads artifacts from, and
// writes people's edits to, the artifact store GONOGO_ARTIFACTS names, the
// workers' (unset: <data>/artifacts, which serves one machine only).

var _ bot.Engine = temporalbackend.SlackRuns{}

// The bot reads a running step's live progress from the cluster (the step
// activities' heartbeats) as it syncs the run's thread: no notice brings it
// to the replica that syncs.
var _ bot.LiveProgress = temporalbackend.SlackRuns{}

// serveOnTemporal is gonogo serve on the cluster tc names; bcfg is the
// bot's configuration, checked.
func serveOnTemporal(ctx context.Context, e env, cfg config, f *runFlags, tc settings.Temporal, bcfg bot.Config, sc settings.Slack, skills string) int {
	log := bcfg.Log
	if err := agentFlagsOnTemporal(f, "serve", "dry-run", "runner", "runner-cmd"); err != nil {
		return fail(e, "serve", err)
	}
	if e.getenv(artifacts.EnvArtifacts) == "" {
		log.Warn("GONOGO_ARTIFACTS is not set: artifacts are read from and edits kept in this machine's data directory, which serve replicas and workers on other machines cannot see; set it to a shared dir: folder or an s3:// bucket", "dir", artifacts.Default(f.data))
	}
	members := &bot.Late{}
	b, c, err := temporalBackend(ctx, e, cfg, tc, f.data, func(c *temporalbackend.Config) {
		c.SlackQueue = temporalbackend.SlackQueue
		c.Members = members.Member
	})
	if err != nil {
		return fail(e, "serve", err)
	}
	defer c.Close()
	bcfg.ScheduledSyncs = true
	bcfg.Inbox = temporalbackend.NewInbox(c, temporalbackend.InboxConfig{Key: bot.EnvelopeKey})
	runs := temporalbackend.SlackRuns{Backend: b}
	reader := temporalbackend.NewReader(b, c, "")
	// A replica keeps nothing on disk: its sessions are in its memory, and
	// after a restart the page says to press Open again.
	pages := runPages(sc, cfg, reader, runs, nil, log, &bcfg)
	sb, err := bot.New(bcfg, runs)
	if err != nil {
		return fail(e, "serve", err)
	}
	members.Set(sb)

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return sb.Run(gctx) })
	// The Slack queue is polled once the bot knows who it is in Slack
	// (a sync or an envelope carried out for another replica needs it).
	g.Go(func() error {
		select {
		case <-sb.Ready():
		case <-gctx.Done():
			return nil
		}
		return temporalbackend.PollSlack(gctx, c, sb, sb.CarryOut)
	})
	if sc.HTTPAddr != "" {
		addr, err := health.Serve(gctx, g, sc.HTTPAddr, web.WithHealth(health.Handler(sb, reader), pages))
		if err != nil {
			return fail(e, "serve", err)
		}
		log.Info("serving /healthz and /metrics", "addr", addr)
		if pages != nil {
			log.Info("serving the run pages under /runs", "addr", addr, "public_url", sc.PublicBase())
		}
	}
	log.Info("gonogo serve starting on Temporal", "temporal", tc.Addr, "namespace", tc.Namespace,
		"queue", temporalbackend.SlackQueue, "skills", skills)
	if err := g.Wait(); err != nil && ctx.Err() == nil {
		return fail(e, "serve", err)
	}
	return terminal.ExitOK
}

// agentFlagsOnTemporal refuses the flags (names) that choose an agent or
// its skills, given to gonogo cmd on Temporal: cmd runs no step there (the
// workers do, with their own runner and skills), so such a flag would be
// accepted and ignored, and --dry-run a promise not kept.
func agentFlagsOnTemporal(f *runFlags, cmd string, names ...string) error {
	if f.changed == nil {
		return nil
	}
	for _, name := range names {
		if !f.changed(name) {
			continue
		}
		fix := "give --" + name + " to the workers"
		if name == "dry-run" {
			fix = "ask for it per run in Slack (--dry-run in the message), or start the workers with --runner dry-run"
		}
		return usagef("--%s: on Temporal, %s runs no agent; steps run on gonogo worker, so %s", name, cmd, fix)
	}
	return nil
}
