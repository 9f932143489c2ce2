package bot

import (
	"context"
	"errors"
	"maps"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// Where Slack allows it, a step's live progress is streamed into its
// run's thread (chat.startStream, chat.appendStream, chat.stopStream)
// rather than shown in the thread's loading status: a message that opens
// with the step's title and holds two tasks, its progress (turns, time
// running, cost) and its tool calls (with the last tool), updated with
// the progress of the moment at most once per ProgressInterval, and
// marked complete or failed when the step ends. A step's stream starts
// once it has run QuietStart, as its message does: a quick step costs
// no stream.
//
// A stream that Slack refuses falls back at once to the loading status,
// which carries the same progress, in the same sync: nothing is lost.
// Refused as a workspace refuses a feature (streamRefused), streaming
// stops for the workspace, with one log line; refused otherwise (a
// stream Slack stopped on a person's Stop), the step goes on with the
// loading status. Streams are kept in memory only: after a restart an
// interrupted step's stream is left as it was.

// liveStream is the stream of a running step's attempt.
type liveStream struct {
	ts      string
	attempt int
	shown   string    // the progress it shows
	at      time.Time // when it was last appended to
	broken  bool      // Slack refused it: the step shows the loading status
}

// Ids of the tasks a step's stream holds.
const (
	taskProgress = "progress"
	taskTools    = "tools"
)

// stream keeps a stream of each running step's progress, stops those of
// steps that ended, and says whether every running step is streamed.
func (t *threadSync) stream(ctx context.Context) bool {
	thread := t.notes[noteThread]
	if thread == "" {
		return false
	}
	now := time.Now()
	live := t.b.streamsOf(t.r.ID)
	if live == nil {
		live = map[int]liveStream{}
	}
	defer func() { t.b.setStreamsOf(t.r.ID, live) }()
	progress := t.progress
	for n, ls := range live {
		s := t.r.Step(n)
		if l := s.Latest(); s.Status == engine.StepRunning && l != nil && l.N == ls.attempt && l.Result == "" {
			continue
		}
		delete(live, n)
		if !ls.broken {
			err := t.b.send.stopStream(ctx, t.channel, ls.ts, streamEnd(t.r, s, progress[n], now)...)
			if err != nil {
				t.b.cfg.Log.Debug("stop the stream of a step", "run", t.r.ID, "step", n, "err", err)
			}
		}
	}
	running := runningSteps(t.r)
	if !t.b.streamsOn() {
		return false
	}
	all := len(running) > 0
	for _, s := range running {
		ok := t.streamStep(ctx, thread, s, progress[s.N], live, now)
		all = all && ok
		if !t.b.streamsOn() {
			return false
		}
	}
	return all
}

// streamStep starts or updates the stream of a running step, and says
// whether it is streamed.
func (t *threadSync) streamStep(ctx context.Context, thread string, s *engine.Step, p engine.Progress, live map[int]liveStream, now time.Time) bool {
	l := s.Latest()
	facts := strings.Join(progressFacts(s, p, now), statusSep) + "\n" + toolLine(p)
	ls, ok := live[s.N]
	switch {
	case !ok && t.b.cfg.QuietStart > 0 && now.Before(l.Started.Add(t.b.cfg.QuietStart)):
		t.syncAt(l.Started.Add(t.b.cfg.QuietStart))
		return false
	case !ok:
		chunks := append([]slack.StreamChunk{slack.NewMarkdownTextChunk("*" + mdLine(engine.Title(t.r, s).Heading(), 200) + "*\n")},
			streamTasks(s, p, now, slack.TaskCardStatusInProgress)...)
		ts, err := t.b.send.startStream(ctx, t.channel, thread, t.r.StartedBy, t.b.team, chunks...)
		if err != nil {
			t.streamFailed(s, err, live, l.N)
			return false
		}
		live[s.N] = liveStream{ts: ts, attempt: l.N, shown: facts, at: now}
		return true
	case ls.broken:
		return false
	case facts == ls.shown:
		return true
	case now.Before(ls.at.Add(t.b.cfg.ProgressInterval)):
		t.syncAt(ls.at.Add(t.b.cfg.ProgressInterval))
		return true
	}
	if err := t.b.send.appendStream(ctx, t.channel, ls.ts, streamTasks(s, p, now, slack.TaskCardStatusInProgress)...); err != nil {
		var le *laterError
		if errors.As(err, &le) {
			t.syncAt(le.until)
			return true
		}
		t.streamFailed(s, err, live, l.N)
		return false
	}
	ls.shown, ls.at = facts, now
	live[s.N] = ls
	return true
}

// streamFailed notes a stream Slack refused: the step shows the loading
// status from now on, and a workspace's refusal ends streaming there.
func (t *threadSync) streamFailed(s *engine.Step, err error, live map[int]liveStream, attempt int) {
	var le *laterError
	switch {
	case errors.As(err, &le):
		t.syncAt(le.until) // the loading status meanwhile
		return
	case featureRefused(err):
		t.b.noStreams(err)
	default:
		t.b.cfg.Log.Debug("Slack refused the stream of a step; the loading status shows its progress", "run", t.r.ID, "step", s.N, "err", err)
	}
	live[s.N] = liveStream{attempt: attempt, broken: true}
}

// streamTasks are the tasks of a step's stream: its progress, and its
// tool calls with the last tool.
func streamTasks(s *engine.Step, p engine.Progress, now time.Time, status slack.TaskCardStatus) []slack.StreamChunk {
	progress := slack.NewTaskUpdateChunk(taskProgress, plain(strings.Join(progressFacts(s, p, now), statusSep), 200))
	progress.Status = status
	if st := strings.TrimSpace(p.Status); st != "" {
		progress.Details = plain(st, 200)
	}
	tools := slack.NewTaskUpdateChunk(taskTools, count(p.ToolCalls, "tool call"))
	tools.Status = status
	if p.LastTool != "" {
		tools.Details = plain("last: "+p.LastTool, 200)
	}
	return []slack.StreamChunk{progress, tools}
}

func toolLine(p engine.Progress) string { return count(p.ToolCalls, "tool call") + " " + p.LastTool }

// streamEnd are the last chunks of a step's stream: its tasks complete,
// or failed when the attempt did not produce.
func streamEnd(r *engine.Run, s *engine.Step, p engine.Progress, now time.Time) []slack.StreamChunk {
	status := slack.TaskCardStatusComplete
	if l := s.Latest(); l == nil || l.Result == engine.ResultFailed || l.Result == "" {
		status = slack.TaskCardStatusError
	}
	return streamTasks(s, p, now, status)
}

// featureRefused says Slack refused a method as a workspace or an app
// without the feature does (refusedSessionErrors).
func featureRefused(err error) bool { return sessionsRefused(err) }

func (b *Bot) streamsOn() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.streamsOff
}

// noStreams stops streaming in the workspace, and logs why the first time.
func (b *Bot) noStreams(err error) {
	b.mu.Lock()
	first := !b.streamsOff
	b.streamsOff = true
	b.mu.Unlock()
	if first {
		b.cfg.Log.Warn("Slack refused to stream a step's progress; run threads show it in the loading status instead", "err", err)
	}
}

func (b *Bot) streamsOf(id engine.RunID) map[int]liveStream {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.streams[id])
}

func (b *Bot) setStreamsOf(id engine.RunID, live map[int]liveStream) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(live) == 0 {
		delete(b.streams, id)
		return
	}
	if b.streams == nil {
		b.streams = map[engine.RunID]map[int]liveStream{}
	}
	b.streams[id] = live
}
