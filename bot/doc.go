// Package bot is gonogo's Slack front end (gonogo serve). It adds no rules
// of its own: every decision goes through the engine.
//
// It is built in three layers. Translate turns what Slack delivers (slash
// commands, block actions, view submissions, app mentions) into gonogo
// requests, and refuses anything it cannot read; render turns runs into
// Block Kit messages and modals that stay within Slack's limits; both are
// pure. Transport acknowledges every Socket Mode envelope before any work
// (the acknowledgement carries the answer a person can be given at once:
// what a command starts or why it starts nothing, a modal's field errors),
// opens the modal a click asks for while its trigger is young, hands the
// envelope to a queue, carries out the request through the engine, and
// keeps each run's thread in step with the run: the bot notes with a run
// which messages and files its thread already has, so after a crash or an
// outage it posts what is missing and updates the rest. While a step runs
// the thread shows Slack's loading status with its live progress, so that
// progress costs no message update. Every Web API call waits out a 429 and
// is retried; nothing is dropped.
//
// Layout. Files are named for the layer and then the thing they hold.
// Translate: translate.go (the errors payloads are refused with, Slack
// ids), translate_command.go (slash commands), translate_action.go (button
// clicks), translate_submission.go (modal submissions),
// translate_mention.go (mentions with a plan file), translate_text.go
// (undoing what Slack does to typed text, splitting words); ids.go holds
// the action ids and button values both directions share. Render:
// render.go (View, the words for states and decisions, fallback text),
// render_header.go (a run's header), render_checklist.go (the list of
// steps with their state, in the header and at the end), render_step.go
// (a step's message, the interrupted notice, a reminder and the note that
// a decision timed out), render_status.go (the thread's loading status,
// every line within Slack's limit),
// render_end.go (completion and halt, with the table of the steps),
// render_modal.go (the modals, and the loading and notice views they open
// as and fill with), render_command.go (answers to commands: help, the
// runs list, refusals), render_preview.go (a run's preview with Start and
// Cancel, a check, the choice between plan files), render_notice.go (what
// a command or a mention is answered with at once), render_blocks.go
// (Block Kit's limits, the blocks every message is made of, and defanging
// the text Slack renders as Markdown), render_text.go (escaping, cutting
// to fit, names,
// times, money). Transport: bot.go (start-up, the envelopes Socket Mode
// delivers, when each run is synced, shutdown), conn.go (connecting to
// Slack, its retries and health),
// inbox.go and queue.go (envelopes kept and acknowledged, then handed
// on),
// handle.go (carrying out a request; one that starts a run is read by
// internal/intake, as in the terminal), handle_preview.go (finding the plan
// among a mention's files, a preview's Start and Cancel, a pick of plan
// file), handle_answer.go (answering a command or a mention as it
// arrives), handle_modal.go (modals: opened first, filled after,
// submissions checked in their acknowledgement), sync_plan.go (what a
// run's thread
// needs, planned from the run and its notes, pure: the reminders and
// timeouts the engine journals among it), sync.go (carrying that
// plan out, the notes, and the run's audit trail at its end),
// sync_status.go (the thread's loading status), sender.go (the Web API
// calls, retries and the
// chat.update budget), members.go (who a Slack person is, for the
// engine's rule of who may decide), workflow.go (named workflows), config.go and metrics.go. The fake Slack
// in fakeslack holds the one Block Kit validator the tests use.
package bot
