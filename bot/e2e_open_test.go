package bot_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// signIns stands for the web pages' sign-in links (Config.SignIn): it
// records who each link was made for.
type signIns struct {
	mu    sync.Mutex
	made_ []string // user/team/run
}

func (s *signIns) make(_ context.Context, user, team string, run engine.RunID) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.made_ = append(s.made_, user+"/"+team+"/"+string(run))
	return "https://gonogo.example.com/signin?token=tok-" + user, nil
}

func (s *signIns) made() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.made_)
}

// Without web pages (no GONOGO_PUBLIC_URL: no Config.SignIn) no message
// offers Open.
func TestNoOpenWithoutPages(t *testing.T) {
	srv := newSlack(t)
	start(t, srv, t.TempDir(), &scriptedRunner{})
	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	header := waitText(t, srv, "gonogo chain run")
	for _, m := range []fakeslack.Message{step1, header} {
		if hasButton(m, "Open") {
			t.Errorf("Open offered without web pages: %v", m.Buttons())
		}
	}
	for _, m := range srv.Messages(channel) {
		if slices.ContainsFunc(m.Buttons(), func(b fakeslack.Button) bool { return b.ActionID == bot.ActionOpen }) {
			t.Errorf("a message offers Open: %q", m.Text)
		}
	}
}

// With web pages, step messages and the header offer Open beside their
// buttons; pressing it shows that person alone a sign-in link made for
// them (their user and team) and the run; a person of another
// organization gets none.
func TestOpenShowsTheirOwnSignInLink(t *testing.T) {
	srv := newSlack(t)
	links := &signIns{}
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withConfig(func(c *bot.Config) { c.SignIn = links.make }))
	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve", "Open")
	header := waitMsg(t, srv, "the header with Open", func(m fakeslack.Message) bool {
		return strings.Contains(m.Rendered, "gonogo chain run") && hasButton(m, "Open")
	})
	if got := step1.Buttons(); got[len(got)-1].Text != "Open" || got[0].Text != "Approve" {
		t.Errorf("step 1's buttons %v: want the decisions, then Open", got)
	}
	id := h.onlyRun().ID

	const reader = "U0READER"
	clickFrom(t, srv, reader, fakeslack.TeamID, step1, "Open")
	e := waitEphemeral(t, srv, reader, "https://gonogo.example.com/signin?token=tok-"+reader, string(id), "works once, within 10 minutes")
	if e.Via != "chat.postEphemeral" || e.Channel != channel {
		t.Errorf("the link was shown via %s in %s, want chat.postEphemeral in %s", e.Via, e.Channel, channel)
	}
	if got := links.made(); len(got) != 1 || got[0] != reader+"/"+fakeslack.TeamID+"/"+string(id) {
		t.Fatalf("links made for %v, want one for %s of %s on %s", got, reader, fakeslack.TeamID, id)
	}
	for _, other := range []string{starter, ""} {
		for _, e := range afterAcks(srv.Ephemerals(other)) {
			if e.User != reader && strings.Contains(e.Rendered, "signin") {
				t.Errorf("%s was shown a sign-in link: %q", e.User, e.Rendered)
			}
		}
	}

	clickFrom(t, srv, "U0OUTSIDE", "T0OTHERORG", header, "Open")
	waitEphemeral(t, srv, "U0OUTSIDE", "another organization cannot open")
	if got := links.made(); len(got) != 1 {
		t.Errorf("a link was made for a person of another organization: %v", got)
	}
	if r := h.onlyRun(); r.Steps[0].Status != engine.StepWaiting {
		t.Errorf("pressing Open changed step 1: %s", r.Steps[0].Status)
	}
}
