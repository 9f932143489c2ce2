package bot_test

import (
	"testing"

	"github.com/gonogo/gonogo/internal/fakeslack"
)

func TestChainCheckpointsEndToEnd(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories -- mobile checkout")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	click(t, srv, starter, step1, "Approve")
	step2 := waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	click(t, srv, starter, step2, "Approve")
	waitText(t, srv, "Run complete")
	if err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool { return len(st.Files(channel, step1.ThreadTS)) == 2 }); err != nil {
		t.Fatalf("artifacts not attached: %v", err)
	}
	if r := h.onlyRun(); r.State != "completed" {
		t.Errorf("run state %s, want completed", r.State)
	}
}
