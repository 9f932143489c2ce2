package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// eventStream folds the JSON event stream of one agent CLI (one event per
// line) into live progress and, once the agent is gone, its outcome. The
// claude, codex and gemini runners differ only in their eventStream and
// their arguments; runStream does the rest the same way for all three.
type eventStream interface {
	// add takes one line of output and reports whether it is news to show
	// at once (a new turn, a status line, the end) rather than throttled.
	add(line []byte) (urgent bool)
	// progress is what the stream has said so far.
	progress() engine.Progress
	// finish completes the outcome of the attempt from what the stream
	// said and how the process ended.
	finish(o *engine.Outcome, x exit)
}

// stderrWatcher is an eventStream that also reads status lines from the
// agent's stderr (Gemini CLI's retry notices go there, not to its events).
type stderrWatcher interface {
	stderrLine(line string) (urgent bool)
}

// lineWriter calls fn with each line written to it, without its newline;
// a line longer than 4 KiB is cut there.
type lineWriter struct {
	fn  func(string)
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.buf = append(w.buf, p...)
			if len(w.buf) > 4<<10 {
				w.fn(string(w.buf[:4<<10]))
				w.buf = w.buf[:0]
			}
			break
		}
		w.buf = append(w.buf, p[:i]...)
		w.fn(string(w.buf))
		w.buf, p = w.buf[:0], p[i+1:]
	}
	return n, nil
}

// runStream runs an agent CLI that writes a JSON event stream on stdout,
// with the job's prompt on stdin, and folds its events with st. Timeouts,
// cancellation, the output cap (applied to each event line) and the
// process-group cleanup are runProcess's.
func runStream(ctx context.Context, agent string, cfg Config, job engine.Job, args []string, st eventStream, progress func(engine.Progress)) engine.Outcome {
	report := throttle(time.Now(), progress)
	max := cfg.maxOutput()
	secrets := secretValues(cfg.Env)
	// stdout and stderr are read on goroutines of their own; st sees one
	// line at a time, and reports leave in the order the lines came.
	var mu sync.Mutex
	fold := func(add func() bool) {
		mu.Lock()
		defer mu.Unlock()
		urgent := add()
		p := st.progress()
		p.Status = secrets.redact(p.Status)
		report(p, urgent)
	}
	sp := spec{
		cmd:     cfg.Cmd,
		args:    args,
		env:     environ(agent, cfg, job),
		dir:     cfg.Dir,
		stdin:   job.Prompt,
		timeout: cfg.stepTimeout(job),
		grace:   cfg.killGrace(),
		agents:  cfg.AgentsDir,
	}
	if w, ok := st.(stderrWatcher); ok {
		sp.stderrLine = func(line string) { fold(func() bool { return w.stderrLine(line) }) }
	}
	x := runProcess(ctx, sp, func(r io.Reader) error {
		return readLines(r, max, func(line []byte) {
			fold(func() bool { return st.add(line) })
		})
	})
	mu.Lock() // a late stderr line may still be folding
	defer mu.Unlock()
	o := x.outcome(cfg.Cmd)
	st.finish(&o, x)
	o.AgentError = secrets.redact(o.AgentError)
	o.Stderr = secrets.redact(o.Stderr)
	if o.Err != nil {
		if msg := o.Err.Error(); secrets.redact(msg) != msg {
			o.Err = &runError{msg: secrets.redact(msg), is: []error{o.Err}}
		}
	}
	return o
}

// stream folds Claude Code's stream-json output (one JSON event per line)
// into what gonogo shows and keeps: progress while the agent works, the
// result event at the end.
//
// Lines that are not JSON objects (a warning printed to stdout, a broken
// write) are tolerated and counted: they never fail an attempt that ends
// with a valid result event, and they are mentioned only when it does not.
type stream struct {
	turns     int // the main agent's turns, counted as the result's num_turns counts them
	ids       map[string]bool
	perEvent  bool // the agent counts every message event as a turn (Claude Code before 2.1)
	toolCalls int  // tool_use blocks, the main agent's and its subagents'
	lastTool  string
	status    string // the latest api_retry, until the agent answers again
	errKind   string // the error field of the last assistant message that had one
	errText   string // that message's text
	lineCount
	result *resultEvent
}

// lineCount counts the lines of an agent's stream that were JSON events
// and those that were not, which the error of a stream that ended
// without its final event mentions.
type lineCount struct {
	events  int // lines that were JSON objects
	garbage int // lines that were not
}

// decode decodes a line of the stream into ev, counting it as garbage
// when it is no JSON object; false for that and for a blank line.
func (c *lineCount) decode(line []byte, ev any) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return false
	}
	if line[0] != '{' || json.Unmarshal(line, ev) != nil {
		c.garbage++
		return false
	}
	return true
}

// event holds the fields gonogo reads from any stream-json event.
type event struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	Version         string          `json:"claude_code_version"` // on the init event
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	Message         json.RawMessage `json:"message"`
	// Error is set on an assistant message Claude Code made up to report
	// a failed API call (authentication_failed, rate_limit, ...) and, as a
	// string, on a system api_retry event (overloaded, ...).
	Error string `json:"error"`
	// The rest of a system api_retry event.
	Attempt     int `json:"attempt"`
	MaxRetries  int `json:"max_retries"`
	ErrorStatus int `json:"error_status"`
}

// message is the part of an assistant event's message gonogo reads.
type message struct {
	ID      string          `json:"id"`
	Content json.RawMessage `json:"content"`
}

type contentBlock struct {
	Type string `json:"type"`
	Name string `json:"name"`
	Text string `json:"text"`
}

// resultEvent is the final event of a run: the answer, its cost and usage.
type resultEvent struct {
	Subtype      string   `json:"subtype"`
	IsError      bool     `json:"is_error"`
	Result       jsonText `json:"result"` // the artifact, decoded once
	NumTurns     int      `json:"num_turns"`
	TotalCostUSD float64  `json:"total_cost_usd"`
	Errors       []string `json:"errors"`
	// Set when the session ended on a failed API call.
	TerminalReason string `json:"terminal_reason"`
	APIErrorStatus int    `json:"api_error_status"`
	Usage          struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

// add takes one line of output and reports whether it began a new turn of
// the main agent.
func (s *stream) add(line []byte) (newTurn bool) {
	var ev event
	if !s.decode(line, &ev) {
		return false
	}
	switch ev.Type {
	case "assistant":
		s.events++
		return s.assistant(ev)
	case "user":
		s.events++
		return s.user(ev)
	case "result":
		return s.takeResult(line)
	case "system":
		s.events++
		return s.system(ev)
	}
	s.events++
	return false
}

// user counts a user event as a turn where the Claude Code version does:
// before 2.1 it counts the main agent's tool results as turns too.
func (s *stream) user(ev event) (newTurn bool) {
	if s.perEvent && ev.ParentToolUseID == nil {
		s.turns++
		return true
	}
	return false
}

// takeResult keeps the final result event; one that does not decode is
// garbage.
func (s *stream) takeResult(line []byte) bool {
	var r resultEvent
	if json.Unmarshal(line, &r) != nil {
		s.garbage++
		return false
	}
	s.events++
	s.result = &r
	s.status = ""
	return true
}

// system reads the version an init event names (it says how turns are
// counted) and the status an API retry puts the agent in.
func (s *stream) system(ev event) bool {
	switch ev.Subtype {
	case "init":
		s.perEvent = countsEveryEvent(ev.Version)
	case "api_retry":
		s.status = retryStatus(ev)
		return true
	}
	return false
}

// retryStatus words a system api_retry event: "API retry 1 of 10:
// overloaded (529)".
func retryStatus(ev event) string {
	msg := "API retry"
	if ev.Attempt > 0 {
		msg += fmt.Sprintf(" %d", ev.Attempt)
		if ev.MaxRetries > 0 {
			msg += fmt.Sprintf(" of %d", ev.MaxRetries)
		}
	}
	var why []string
	if e := strings.TrimSpace(ev.Error); e != "" {
		why = append(why, strings.ReplaceAll(e, "_", " "))
	}
	if ev.ErrorStatus > 0 {
		why = append(why, fmt.Sprintf("(%d)", ev.ErrorStatus))
	}
	if len(why) > 0 {
		msg += ": " + strings.Join(why, " ")
	}
	return msg
}

// progress implements eventStream.
func (s *stream) progress() engine.Progress {
	p := engine.Progress{Turns: s.turns, ToolCalls: s.toolCalls, LastTool: s.lastTool, Status: s.status}
	if s.result != nil {
		p.CostUSD = s.result.TotalCostUSD
	}
	return p
}

func (s *stream) assistant(ev event) (newTurn bool) {
	var m message
	if len(ev.Message) == 0 || json.Unmarshal(ev.Message, &m) != nil {
		return false
	}
	// Claude Code sends one event per content block, so a message arrives
	// as several events sharing its id; subagents' messages carry the
	// parent_tool_use_id of the Task call that started them.
	if ev.ParentToolUseID == nil {
		s.status = ""
		newTurn = s.mainMessage(m.ID)
	}
	var blocks []contentBlock
	if bytes.HasPrefix(bytes.TrimSpace(m.Content), []byte("[")) && json.Unmarshal(m.Content, &blocks) == nil {
		text := s.blocks(blocks)
		if ev.Error != "" {
			s.errKind, s.errText = ev.Error, strings.TrimSpace(strings.Join(text, "\n"))
		}
	}
	return newTurn
}

// mainMessage counts a turn for the main agent's message id unless an
// earlier event of the same message counted it (or, before Claude Code
// 2.1, every event is a turn).
func (s *stream) mainMessage(id string) (newTurn bool) {
	if !s.perEvent && id != "" && s.ids[id] {
		return false
	}
	if s.ids == nil {
		s.ids = make(map[string]bool)
	}
	if id != "" {
		s.ids[id] = true
	}
	s.turns++
	return true
}

// blocks counts the tool calls of a message's content blocks and returns
// their text.
func (s *stream) blocks(blocks []contentBlock) (text []string) {
	for _, b := range blocks {
		switch b.Type {
		case "tool_use":
			s.toolCalls++
			if b.Name != "" {
				s.lastTool = b.Name
			}
		case "text":
			text = append(text, b.Text)
		}
	}
	return text
}

// countsEveryEvent reports whether a Claude Code version counts, in the
// result's num_turns, every message event of the main conversation after
// the prompt (its own and the tool results) rather than the main agent's
// distinct messages, as versions from 2.1 do. A stream that does not say
// its version is counted as a current one.
func countsEveryEvent(version string) bool {
	major, rest, ok := strings.Cut(version, ".")
	minor, _, _ := strings.Cut(rest, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if !ok || err1 != nil || err2 != nil {
		return false
	}
	return ma < 2 || ma == 2 && mi < 1
}
