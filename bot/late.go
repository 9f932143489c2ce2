package bot

import (
	"context"
	"sync/atomic"

	"github.com/gonogo/gonogo/engine"
)

// Late hands the engine's notices to the bot, which is built after the
// engine it needs, and asks it who a person is: the engine is made with a
// Late, and the bot, once built, is Set in it.
type Late struct{ b atomic.Pointer[Bot] }

// Set makes b the bot that hears the notices and says who people are.
func (l *Late) Set(b *Bot) { l.b.Store(b) }

func (l *Late) Notify(n engine.Notice) {
	if b := l.b.Load(); b != nil {
		b.Notify(n)
	}
}

// Member is the service's engine.Members: the bot says who a Slack person
// is, and that anyone else (the local API's operator) may decide any run.
// Before the bot is built no Slack person can act: whoever does is the
// operator.
func (l *Late) Member(ctx context.Context, user string, groups []string) (engine.Member, error) {
	if b := l.b.Load(); b != nil {
		return b.Member(ctx, user, groups)
	}
	return engine.LocalOperator(ctx, user, groups)
}
