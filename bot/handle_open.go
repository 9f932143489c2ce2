package bot

import (
	"context"
	"fmt"
)

// openPages answers a press of Open with a one-time sign-in link to the
// run's web page, shown to the person alone (chat.postEphemeral): the
// session it starts decides as them. A person of another organization
// whom the approvers do not name gets none: the pages show every run.
func (b *Bot) openPages(ctx context.Context, a Action) {
	var msg string
	switch {
	case b.cfg.SignIn == nil:
		msg = "gonogo's web pages are not served now (GONOGO_PUBLIC_URL is not set). Nothing was opened."
	case b.outsider(a.User, a.Team):
		msg = "People of another organization cannot open gonogo's web pages: they show every run. Nothing was opened."
	default:
		link, err := b.cfg.SignIn(ctx, a.User, a.Team, a.Ref.Run)
		if err != nil {
			b.cfg.Log.Error("make a sign-in link", "run", a.Ref.Run, "err", err)
			msg = "gonogo could not make a sign-in link; nothing was opened. The operator can find why in gonogo's log."
			break
		}
		msg = fmt.Sprintf("<%s|Open run %s in your browser>. This link is yours alone: it works once, within 10 minutes, "+
			"and starts a session of 12 hours in which the page's decisions are recorded as yours, <@%s>, as a click here is.",
			link, a.Ref.Run, a.User)
	}
	b.tell(ctx, a.Channel, a.ThreadTS, a.User, msg, nil)
}
