package bot_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/internal/fakeslack"
)

// waitStreams waits until the thread's streams satisfy cond.
func waitStreams(t *testing.T, srv *fakeslack.Server, thread, what string, cond func([]fakeslack.Stream) bool) []fakeslack.Stream {
	t.Helper()
	var got []fakeslack.Stream
	if err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		got = st.Streams(channel, thread)
		return cond(got)
	}); err != nil {
		t.Fatalf("%s: streams %+v: %v", what, got, err)
	}
	return got
}

// A running step's progress is streamed into its thread, answering the
// run's starter: the step's title, its turns and time running, its tool
// calls with the last tool, as task updates; the stream is stopped with
// its tasks complete when the step ends. The thread then needs no loading
// status.
func TestStreamShowsARunningStepsProgress(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	release := runner.holdSkill("deliver-prd")
	defer release()
	start(t, srv, t.TempDir(), runner)

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	running := waitStep(t, srv, 1, "Running", "Cancel")
	ss := waitStreams(t, srv, running.ThreadTS, "step 1's progress", func(ss []fakeslack.Stream) bool {
		return len(ss) == 1 && len(ss[0].Tasks) == 2 && strings.Contains(ss[0].Tasks[0].Title, "1 turn")
	})
	s := ss[0]
	if !strings.Contains(s.Markdown, "Step 1 of 2: deliver-prd") || s.Recipient != starter || s.Team != fakeslack.TeamID {
		t.Errorf("stream = %+v", s)
	}
	if tools := s.Tasks[1]; tools.Title != "2 tool calls" || tools.Details != "last: Read" || tools.Status != "in_progress" {
		t.Errorf("the tool calls' task = %+v", tools)
	}
	release()
	waitStep(t, srv, 1, "deliver-prd", "Approve")
	waitStreams(t, srv, running.ThreadTS, "step 1's stream stopped", func(ss []fakeslack.Stream) bool {
		return len(ss) == 1 && ss[0].StoppedBy == "app" && ss[0].Tasks[0].Status == "complete"
	})
	for _, st := range srv.Statuses(channel, running.ThreadTS) {
		if st.Status != "" {
			t.Errorf("a streamed step's thread was given the loading status %q", st.Status)
		}
	}
}

// A workspace that refuses streaming gets the loading status at once,
// with the progress the stream would have shown, one log line, and no
// second try.
func TestStreamRefusedFallsBackToTheLoadingStatus(t *testing.T) {
	srv := newSlack(t)
	srv.Fail("chat.startStream", 1000, "not_allowed")
	logs := &ldLog{}
	runner := &scriptedRunner{}
	release := runner.holdSkill("deliver-prd")
	defer release()
	start(t, srv, t.TempDir(), runner, withLog(slog.New(slog.NewTextHandler(logs, nil))))

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	running := waitStep(t, srv, 1, "Running", "Cancel")
	waitStatus(t, srv, running.ThreadTS, "is running step 1/2: deliver-prd")
	if err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		ss := st.Statuses(channel, running.ThreadTS)
		return len(ss) > 0 && strings.Contains(strings.Join(ss[len(ss)-1].Loading, "|"), "last tool: Read")
	}); err != nil {
		t.Fatalf("the loading status lacks the progress the stream had: %v", err)
	}
	release()
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	click(t, srv, starter, step1, "Approve")
	waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	if n := len(srv.Calls("chat.startStream")); n != 1 {
		t.Errorf("chat.startStream called %d times, want once", n)
	}
	if n := strings.Count(logs.String(), "refused to stream"); n != 1 {
		t.Errorf("%d log lines say streaming was refused, want 1:\n%s", n, logs)
	}
}
