package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// Who may decide is the engine's rule (engine.MayDecide). The bot tells it
// only who a Slack person is: whether they come from another organization
// than the bot's workspace (a shared channel), and which approver user
// groups they are in, read with usergroups.users.list and kept a while.

// personKey marks a context as carrying out a Slack person's request; its
// value is the person's team.
type personKey struct{}

// asPerson marks ctx as carrying out the request of a Slack person of team.
func asPerson(ctx context.Context, team string) context.Context {
	return context.WithValue(ctx, personKey{}, team)
}

// AsPerson marks ctx as carrying out the request of a Slack person of
// team made elsewhere than in Slack (the web page of a session an Open
// button started): the engine then judges them as it judges their click
// (Member), not as the operator.
func AsPerson(ctx context.Context, team string) context.Context { return asPerson(ctx, team) }

// Member tells the engine who user is (engine.Members). A request that is
// no Slack person's is the operator's: gonogo's own (giving up a run it
// cannot post for), or in gonogo serve the local API's, which only the
// data directory's owner can reach.
func (b *Bot) Member(ctx context.Context, user string, groups []string) (engine.Member, error) {
	team, ok := ctx.Value(personKey{}).(string)
	if !ok {
		return engine.Member{Operator: true}, nil
	}
	m := engine.Member{Outsider: b.foreign(team)}
	if m.Outsider {
		return m, nil // their groups cannot let them decide
	}
	for _, g := range groups {
		if g == "" || g[0] != 'S' {
			continue // a user id, not a user group
		}
		if slices.Contains(b.groupMembers(ctx, g), user) {
			m.Groups = append(m.Groups, g)
			break // one is enough
		}
	}
	return m, nil
}

// foreign reports whether team is another organization than the bot's.
func (b *Bot) foreign(team string) bool {
	return team != "" && b.team != "" && team != b.team
}

// outsider reports whether a user of team may not start runs: a person of
// another organization whom the approvers do not name.
func (b *Bot) outsider(user, team string) bool {
	return engine.KeptOut(user, engine.Member{Outsider: b.foreign(team)}, b.cfg.Approvers)
}

// mayDecide asks the engine whether user, a person of the team ctx
// carries (asPerson), may decide on r. A failure to tell is an error,
// never a refusal (see couldNotRead).
func (b *Bot) mayDecide(ctx context.Context, r *engine.Run, user string) (bool, error) {
	switch err := b.eng.MayDecide(ctx, r, user); {
	case err == nil:
		return true, nil
	case errors.Is(err, engine.ErrForbidden):
		return false, nil
	default:
		return false, fmt.Errorf("tell who may decide on run %s: %w", r.ID, err)
	}
}

func (b *Bot) groupMembers(ctx context.Context, group string) []string {
	b.mu.Lock()
	c, ok := b.groups[group]
	b.mu.Unlock()
	if ok && time.Since(c.fetched) < 5*time.Minute {
		return c.members
	}
	var members []string
	err := b.send.do(ctx, "usergroups.users.list", func() error {
		var err error
		members, err = b.api.GetUserGroupMembersContext(ctx, group)
		return err
	})
	if err != nil {
		b.cfg.Log.Error("read user group members", "group", group, "err", err)
		return c.members
	}
	b.mu.Lock()
	b.groups[group] = groupCache{members: members, fetched: time.Now()}
	b.mu.Unlock()
	return members
}
