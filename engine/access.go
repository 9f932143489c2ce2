package engine

import (
	"context"
	"fmt"
	"slices"
)

// Who may decide on a run is the engine's rule, so that every front end
// applies the same one: the run's starter, the approvers recorded with the
// run (Oversight.Approvers: people, or groups a person belongs to), and the
// local operator, who may decide any run. A person from outside the
// organization a front end serves (a guest from another Slack workspace in a
// shared channel) may not, even on a run they started, unless the approvers
// name them. gonogo's own actions (its retries, a decision timeout) are
// never refused. A front end says only who a person is, through
// ServiceConfig.Members; the engine knows nothing of Slack.

// ErrNotApprover refuses a person who may not decide on a run: the
// decision, pause, resume, cancel or abort changes nothing. It wraps
// ErrForbidden.
var ErrNotApprover = fmt.Errorf("%w: only the run's starter and its approvers may", ErrForbidden)

// Member is what a front end knows of a person who acts on a run.
type Member struct {
	// Operator says the person drives gonogo itself: the terminal, or
	// gonogo decide through the data directory's socket, which only its
	// owner can open. The operator may decide any run.
	Operator bool
	// Outsider says the person comes from outside the organization the
	// front end serves.
	Outsider bool
	// Groups are groups the person belongs to, among those they were
	// asked about (one is enough).
	Groups []string
}

// Members says who user is. groups are the run's approvers the person
// might belong to (a front end ignores names that are not groups); nil
// when no group can matter, as for the run's own starter. It is called
// only when the rule needs it, while the run's other transitions wait: a
// front end that reads a directory (a Slack user group's members) keeps
// what it read for a while.
type Members func(ctx context.Context, user string, groups []string) (Member, error)

// LocalOperator is the Members of a gonogo driven from its own machine (the
// terminal, and the local API that only the data directory's owner can
// reach): whoever acts is the operator.
func LocalOperator(context.Context, string, []string) (Member, error) {
	return Member{Operator: true}, nil
}

// KeptOut reports whether a person from outside the organization is kept
// from starting runs and deciding: unless approvers lists them by name.
func KeptOut(user string, m Member, approvers []string) bool {
	return m.Outsider && !m.Operator && !slices.Contains(approvers, user)
}

// MayDecide reports whether user, who m says they are, may decide on a run
// started by starter whose approvers are approvers: the operator; else,
// unless kept out, the starter, an approver named, or a member of an
// approver group.
func MayDecide(starter string, approvers []string, user string, m Member) bool {
	switch {
	case m.Operator:
		return true
	case user == "" || KeptOut(user, m, approvers):
		return false
	case user == starter || slices.Contains(approvers, user):
		return true
	}
	return inApproverGroup(user, m.Groups, approvers)
}

// inApproverGroup reports whether one of user's groups (other than user
// itself) is among approvers.
func inApproverGroup(user string, groups, approvers []string) bool {
	for _, g := range groups {
		if g != user && slices.Contains(approvers, g) {
			return true
		}
	}
	return false
}

// ownActor reports whether actor is gonogo itself: no person decides, so
// nobody's right to is checked.
func ownActor(actor string) bool {
	return actor == RetryActor || actor == RateLimitActor || actor == TimeoutActor || actor == AutoPickActor
}

// ApproversOf are the approvers of r: those recorded with it, or for a run
// recorded before runs kept their own, legacy (the front end's list, which
// judged such runs then).
func ApproversOf(r *Run, legacy []string) []string {
	if r.Oversight == nil {
		return legacy
	}
	return r.Oversight.Approvers
}

// MayDecide returns nil when user may decide on r, else an error wrapping
// ErrNotApprover: a front end asks before it offers a person something that
// ends in a decision (a modal); Decide, Record, Pause, Unpause, Cancel and
// Abort ask again themselves.
func (s *Service) MayDecide(ctx context.Context, r *Run, user string) error {
	if ownActor(user) {
		return nil
	}
	approvers := ApproversOf(r, s.approvers)
	if user != "" && slices.Contains(approvers, user) {
		// Named: never an outsider, so nobody needs asking.
		return nil
	}
	var groups []string
	if user != r.StartedBy {
		groups = approvers
	}
	m, err := s.members(ctx, user, groups)
	if err != nil {
		return fmt.Errorf("who is %s: %w", user, err)
	}
	if !MayDecide(r.StartedBy, approvers, user, m) {
		return fmt.Errorf("%s on run %s: %w", user, r.ID, ErrNotApprover)
	}
	return nil
}

// mayAct loads run id and checks that actor may act on it, for an entry
// point that has no run at hand.
func (s *Service) mayAct(ctx context.Context, id RunID, actor string) error {
	if ownActor(actor) {
		return nil
	}
	r, err := s.store.Load(ctx, id)
	if err != nil {
		return err
	}
	return s.MayDecide(ctx, r, actor)
}
