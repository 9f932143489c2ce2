// Package web is gonogo's run web page: a reviewer reads a run's
// artifacts at full length in a browser. It owns the pages under /runs
// (the list; one run with its standing, steps, decisions, every attempt's
// artifact rendered from Markdown and as raw text, a diff between two
// attempts, the journal), their live updates (server-sent events), the
// one-time sign-in links and the sessions they start, and the
// headers every response carries (a Content-Security-Policy of the page's
// own origin only, nosniff), and the forms that decide on a waiting step
// and pause or resume a run. A form is POST with its session's CSRF token
// and an idempotency key made with the page; it goes through Decider to the
// engine, whose refusal the page shows as worded, never re-checked here.
//
// A page follows its run over one event stream. A decision, pause or
// resume made through this server's forms wakes every stream following
// that run at once, so the other pages open on it show the change within
// milliseconds; a change made elsewhere (gonogo decide, Slack, another
// gonogo web, the agent finishing) is found by looking every
// Options.PollEvery, a second by default: each look reads the run anew
// (opening the store or asking its holder), so one open page costs at
// most one read a second.
//
// A link is made for a Person (a Slack user, by gonogo serve's Open
// button) or for Options.Actor (gonogo web's printed link); its session
// decides as that person, and the Decider finds them with PersonOf. Links
// and sessions are kept in a Keeper by the SHA-256 of their secret, never
// the secret: gonogo serve's keeper is its store, so a session outlives a
// restart of serve (on Temporal serve keeps them in memory: after a
// restart the page says to press Open again); gonogo web's is memory, so
// stopping it ends every session.
//
// The pages are server-rendered with html/template; the stylesheet and the
// few lines of script that follow a run's changes are embedded in the
// binary, and nothing is loaded from another origin. Markdown is rendered
// with goldmark without raw HTML, and a link survives only when it is
// http, https, mailto or relative.
//
// It may import engine, engine/audit, internal/terminal's pure helpers
// (the words gonogo show uses for a run's state and its journal) and bot
// (SlackActs: a page's decision made as the Slack person the session is
// for, as their click); never cmd/gonogo. What it reads of the runs goes through Reader, which
// the readers cmd/gonogo opens for show (the store, the local API of the
// gonogo holding it, a cluster) satisfy.
//
//	srv := web.New(open, web.Options{})
//	url, _ := srv.SignInURL("http://" + ln.Addr().String())
//	err := srv.Run(ctx, ln)
package web
