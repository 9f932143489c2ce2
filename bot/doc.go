// Package bot is gonogo's Slack front end (gonogo serve): the Socket Mode
// loop, slash commands, Block Kit rendering, modals, file intake and upload,
// and rate-limit-aware posting. It talks to the engine only. This version of
// gonogo does not ship it yet; the terminal front end in cmd/gonogo drives
// the same engine.
package bot
