package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/terminal"
)

// TestDecideARunServeHolds decides from a terminal a run gonogo serve
// carries out: serve applies the decision as a click and updates the
// thread.
func TestDecideARunServeHolds(t *testing.T) {
	srv := fakeslack.New()
	defer srv.Close()
	vars := serveVars(t, srv)
	delete(vars, "GONOGO_HTTP_ADDR")
	s := startServe(vars)
	defer s.stop(t)
	ctx := s.connected(t, srv)
	const ch = "C0LOCAL"
	env := srv.SendSlashCommand(slack.SlashCommand{UserID: "U0LOCAL", ChannelID: ch, Text: "chain deliver-prd -> measure-experiment-design"})
	if _, err := srv.WaitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	waitStep := func(n string) {
		t.Helper()
		_, err := srv.WaitMessage(ctx, ch, func(m fakeslack.Message) bool {
			return strings.HasPrefix(m.Text, "*Step "+n+" of 2") && len(m.Buttons()) > 0 && m.Buttons()[0].Text == "Approve"
		})
		if err != nil {
			t.Fatalf("no step %s message: %v\n%s", n, err, s.stderr.String())
		}
	}
	waitStep("1")

	res := gonogo(t, vars, "", "runs", "--json")
	var list []jsonRunLine
	if err := json.Unmarshal([]byte(res.stdout), &list); err != nil || len(list) != 1 {
		t.Fatalf("runs --json while serve holds the data: exit %d, %v\n%s%s", res.code, err, res.stdout, res.stderr)
	}
	id := list[0].ID
	if res := gonogo(t, vars, "", "decide", id, "approve"); res.code != terminal.ExitOK || !strings.Contains(res.stdout, "gonogo serve (pid") {
		t.Fatalf("decide: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if _, err := srv.WaitMessage(ctx, ch, func(m fakeslack.Message) bool {
		return strings.HasPrefix(m.Text, "*Step 1 of 2") && strings.Contains(m.Rendered, "by tester")
	}); err != nil {
		t.Fatalf("the thread does not show the decision: %v", err)
	}
	waitStep("2")
	if res := gonogo(t, vars, "", "decide", id, "approve"); res.code != terminal.ExitOK {
		t.Fatalf("decide step 2: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if _, err := srv.WaitMessage(ctx, ch, func(m fakeslack.Message) bool { return strings.Contains(m.Rendered, "Run complete") }); err != nil {
		t.Fatalf("the run did not complete: %v", err)
	}
}
