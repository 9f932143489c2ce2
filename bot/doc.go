// Package bot is gonogo's Slack front end (gonogo serve). It owns the
// translation of what Slack delivers (slash commands, clicks, modal
// submissions, mentions) into gonogo requests, the rendering of runs as
// Block Kit messages and modals within Slack's limits, and the transport:
// every Socket Mode envelope is acknowledged before any work and carried
// out through the engine, and each run's thread is kept in step with the
// run, also after a crash or an outage. It adds no rules of its own: every
// decision goes through the engine. Translate and render are pure.
//
// It imports engine, engine/audit (the trail a thread gets at a run's end)
// and internal/intake (how a request to start a run is read), slack-go,
// and nothing else of gonogo; the engine it drives is the Engine interface
// it declares, so engine.Service, or the Temporal backend as cmd/gonogo
// adapts it, stands behind it.
// Which file holds what: docs/layout.md. The tests talk to
// internal/fakeslack, whose validator checks every block sent.
//
//	b, err := bot.New(bot.Config{AppToken: appToken, BotToken: botToken,
//		SlashCommand: "/gonogo", Catalog: cat}, svc)
//	if err != nil {
//		return err // wraps ErrToken for a missing or malformed token
//	}
//	return b.Run(ctx) // until ctx ends
package bot
