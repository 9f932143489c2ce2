package bot_test

import (
	"strings"
	"testing"

	"github.com/gonogo/gonogo/internal/fakeslack"
)

// A step's artifact is attached to the step's own message (file_ids), a
// redo's to the same message, and no message is posted for a file alone
// but the run's audit trail.
func TestArtifactRidesOnItsStepMessage(t *testing.T) {
	srv := newSlack(t)
	start(t, srv, t.TempDir(), &scriptedRunner{})

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories -- mobile checkout")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	thread := step1.ThreadTS
	if err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		m, _ := st.Message(channel, step1.TS)
		return len(m.Files) == 1
	}); err != nil {
		t.Fatalf("step 1's message does not carry its artifact: %v\n%s", err, dump(srv))
	}
	step1, _ = srv.Message(channel, step1.TS)
	if got := step1.Files[0].Name; got != "01-deliver-prd.md" {
		t.Errorf("step 1's message carries %q, want 01-deliver-prd.md", got)
	}
	click(t, srv, starter, step1, "Redo")
	view := waitView(t, srv, 0)
	if _, err := srv.SubmitView(starter, view.ID, nil); err != nil {
		t.Fatal(err)
	}
	if err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		m, _ := st.Message(channel, step1.TS)
		return len(m.Files) == 2
	}); err != nil {
		t.Fatalf("the redo's artifact is not on step 1's message: %v\n%s", err, dump(srv))
	}
	step1 = waitStep(t, srv, 1, "deliver-prd", "attempt 2", "Approve")
	click(t, srv, starter, step1, "Approve")
	step2 := waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	click(t, srv, starter, step2, "Approve")
	waitText(t, srv, "Run complete")
	if err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool { return len(st.Files(channel, thread)) == 4 }); err != nil {
		t.Fatalf("want 3 artifacts and the audit trail in the thread: %v", err)
	}
	for _, m := range srv.Thread(channel, thread) {
		if len(m.Files) == 0 {
			continue
		}
		if m.TS == step1.TS || m.TS == step2.TS {
			continue
		}
		if len(m.Files) != 1 || !strings.HasPrefix(m.Files[0].Name, "audit-") {
			t.Errorf("message %s posted for files %v alone: a step's artifact goes on its own message", m.TS, m.Files)
		}
	}
}
