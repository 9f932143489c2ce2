// Package bot is gonogo's Slack front end (gonogo serve). It adds no rules
// of its own: every decision goes through the engine.
//
// It is built in three layers. Translate (translate.go) turns what Slack
// delivers (slash commands, block actions, view submissions, app mentions)
// into gonogo requests, and refuses anything it cannot read; render
// (render.go, limits.go) turns runs into Block Kit messages and modals that
// stay within Slack's limits; both are pure. Transport (bot.go, handle.go,
// sync.go, remind.go, sender.go) acknowledges every Socket Mode envelope
// before any work, hands it to a queue, carries out the request through
// the engine, and keeps each run's thread in step with the run: the bot
// notes with a run which messages and files its thread already has, so
// after a crash or an outage it posts what is missing and updates the rest.
// Every Web API call waits out a 429 and is retried; nothing is dropped.
package bot
