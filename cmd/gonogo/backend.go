package main

import (
	"context"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/internal/terminal"
)

// The engine as gonogo's own front ends drive it: the terminal, the local
// API other gonogo processes talk to, and the HTTP health and metrics
// handler (the Slack bot declares its own slice, bot.Engine). Each names
// only what it calls. *engine.Service is the backend today; another (one
// that runs steps on a cluster) implements the same methods and keeps the
// rules engine's package doc lists.
//
// There is no Subscribe method: a front end hears of changes through the
// engine.Notifier the backend is made with. Every committed change must
// reach it, also those no front-end call is waiting on (a step finishing,
// an automatic retry, a run resumed on start) and those made before a
// subscriber could have registered, and each process wires its front
// ends once. A notifier fixed at construction cannot miss a change, where
// a subscription would have to say what a late subscriber missed; what a
// front end has not shown yet, it reads back from the run and its journal.
// The cost is a cycle at wiring (serve's bot is made from the backend and
// is its notifier), which bot.Late breaks.

// backend is the engine as gonogo run, resume and demo drive it: they
// start a run or pick one up, record the setup it goes on with, follow it
// at the terminal, and take other processes' decisions through the local
// API.
type backend interface {
	terminal.Backend
	localapi.Decisions
	terminal.SetupRecorder
	Start(ctx context.Context, p engine.Plan, opt engine.StartOptions) (*engine.Run, error)
	Resume(ctx context.Context, id engine.RunID, mode engine.Mode) (*engine.Run, error)
}

var _ backend = (*engine.Service)(nil)
