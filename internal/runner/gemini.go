package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/gonogo/gonogo/engine"
)

// geminiArgs start every Gemini CLI run: its JSONL event stream. Without a
// terminal on stdin Gemini CLI runs headless and reads the prompt from
// stdin, so the prompt needs no argument.
var geminiArgs = []string{"--output-format", "stream-json"}

// geminiAuthExit is the exit status of Gemini CLI when it has no usable
// login (FatalAuthenticationError), before it talks to any server.
const geminiAuthExit = 41

// Gemini runs Google's Gemini CLI for a step. Its events give live
// progress (assistant messages, tool calls, its warnings; its retry notices
// come on stderr); the assistant's
// text after its last tool call is the artifact, and the result event's
// stats the tokens. Gemini CLI reports no cost.
//
// The skill's folder is added to the agent's workspace with
// --include-directories, so its file tools may read it.
type Gemini struct {
	cfg Config
}

// NewGemini returns the gemini runner. An empty cfg.Cmd means "gemini".
func NewGemini(cfg Config) *Gemini {
	if strings.TrimSpace(cfg.Cmd) == "" {
		cfg.Cmd = DefaultGeminiCmd
	}
	return &Gemini{cfg: cfg}
}

// Check reports whether the executable can be found.
func (g *Gemini) Check() error { return check(g.cfg.Cmd) }

// geminiFlags maps the runner options a workflow step may give to Gemini
// CLI's flags.
var geminiFlags = map[string]string{
	"model":         "--model",
	"approval-mode": "--approval-mode",
}

// Run implements engine.Runner.
func (g *Gemini) Run(ctx context.Context, job engine.Job, progress func(engine.Progress)) engine.Outcome {
	if job.DryRun {
		return engine.Outcome{NotRun: true}
	}
	opts, err := optionArgs("gemini", geminiFlags, job.Options)
	if err != nil {
		return engine.Outcome{Err: err}
	}
	args := append([]string(nil), geminiArgs...)
	if job.SkillDir != "" {
		// --include-directories takes several values, so a flag (or
		// nothing) always follows it.
		args = append(args, "--include-directories", job.SkillDir)
	}
	args = append(append(args, opts...), g.cfg.Args...)
	return runStream(ctx, "gemini", g.cfg, job, args, &geminiStream{}, progress)
}

// geminiStream folds Gemini CLI's stream-json events: init, message (user
// or assistant; an assistant answer arrives in delta chunks), tool_use,
// tool_result, error (a warning, or an error it carries on from) and the
// final result, with status success or error.
type geminiStream struct {
	turns     int
	newTurn   bool // the next assistant message starts a turn
	toolCalls int
	lastTool  string
	status    string
	answer    [][]byte // the assistant's text since its last tool call, as it came
	lastError string
	result    *geminiResult
	lineCount
}

type geminiEvent struct {
	Type     string   `json:"type"`
	Role     string   `json:"role"`
	Content  jsonText `json:"content"`
	ToolName string   `json:"tool_name"`
	Severity string   `json:"severity"`
	Message  string   `json:"message"`
}

type geminiResult struct {
	Status string `json:"status"`
	Error  struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stats struct {
		InputTokens  int64  `json:"input_tokens"`
		OutputTokens int64  `json:"output_tokens"`
		Cached       int64  `json:"cached"`
		Input        *int64 `json:"input"` // input tokens not read from the cache
	} `json:"stats"`
}

func (s *geminiStream) add(line []byte) (urgent bool) {
	var ev geminiEvent
	if !s.decode(line, &ev) {
		return false
	}
	s.events++
	switch ev.Type {
	case "message":
		return s.message(ev)
	case "tool_use":
		s.toolCalls++
		s.lastTool = ev.ToolName
		s.answer = nil
		return true
	case "tool_result":
		s.newTurn = true
	case "error":
		s.streamError(ev)
		return true
	case "result":
		return s.takeResult(line)
	}
	return false
}

// streamError shows an error event as the agent's status, and keeps it as
// the last error when its severity says it is one (not a warning).
func (s *geminiStream) streamError(ev geminiEvent) {
	msg := geminiMessage(ev.Message)
	if ev.Severity == "error" {
		s.lastError = msg
	}
	s.status = msg
}

// message keeps the assistant's words as the answer so far, counting a
// turn when they follow the prompt or a tool's result.
func (s *geminiStream) message(ev geminiEvent) (urgent bool) {
	if ev.Role != "assistant" {
		s.newTurn = true
		return false
	}
	s.status = ""
	s.answer = append(s.answer, ev.Content)
	if s.newTurn || s.turns == 0 {
		s.turns++
		s.newTurn = false
		return true
	}
	return false
}

// takeResult keeps the final result event; one that does not decode is
// garbage, not an event.
func (s *geminiStream) takeResult(line []byte) bool {
	var r geminiResult
	if json.Unmarshal(line, &r) != nil {
		s.garbage++
		s.events--
		return false
	}
	s.result, s.status = &r, ""
	return true
}

func (s *geminiStream) progress() engine.Progress {
	return engine.Progress{Turns: s.turns, ToolCalls: s.toolCalls, LastTool: s.lastTool, Status: s.status}
}

// geminiRetry matches the notice Gemini CLI writes to stderr when a
// request failed and it will try again ("Attempt 2 failed with status 429.
// Retrying with backoff... ApiError: {...}").
var geminiRetry = regexp.MustCompile(`^Attempt \d+ failed[^.]*\.(?: Retrying[^.]*\.*)?`)

// stderrLine implements stderrWatcher: a retry notice is a status line.
func (s *geminiStream) stderrLine(line string) (urgent bool) {
	m := geminiRetry.FindString(strings.TrimSpace(ansi.ReplaceAllString(line, "")))
	if m == "" {
		return false
	}
	s.status = m
	return true
}

// geminiNoise are stderr lines that never say why Gemini CLI failed.
var geminiNoise = []string{"Warning: 256-color", "Ripgrep is not available", "[STARTUP]", "Loaded cached credentials", "Data collection is disabled"}

func (s *geminiStream) finish(o *engine.Outcome, x exit) {
	r := s.result
	if r == nil {
		s.noResult(o, x)
		return
	}
	in := r.Stats.InputTokens - r.Stats.Cached
	if r.Stats.Input != nil {
		in = *r.Stats.Input
	}
	o.Usage = engine.Usage{InputTokens: in, OutputTokens: r.Stats.OutputTokens, CacheRead: r.Stats.Cached, Turns: s.turns}
	if r.Status != "success" {
		geminiVendor.agentFailed(o, s.failedWhy(r), "")
		return
	}
	o.Artifact = joined(s.answer)
}

// noResult says why Gemini CLI ended without a result event: the error
// it reported, its stderr, or that the stream just stopped.
func (s *geminiStream) noResult(o *engine.Outcome, x exit) {
	msg := stderrMessage(x.stderr, geminiNoise...)
	switch {
	case o.Err != nil:
	case s.lastError != "":
		geminiVendor.agentFailed(o, s.lastError, "")
	case x.code == geminiAuthExit && msg != "":
		geminiVendor.agentFailed(o, msg, engine.AgentErrAuth)
	case x.code != 0 && msg != "":
		geminiVendor.agentFailed(o, msg, "")
	default:
		o.Err = noEndError("a result event", s.events, s.garbage, x)
	}
}

// failedWhy is why a result that is no success failed: its own error,
// else the last error event, else its status.
func (s *geminiStream) failedWhy(r *geminiResult) string {
	if msg := geminiMessage(r.Error.Message); msg != "" {
		return msg
	}
	if s.lastError != "" {
		return s.lastError
	}
	return fmt.Sprintf("the agent ended with status %q", r.Status)
}

// geminiMessage unwraps the "[API Error: {...}]" Gemini CLI puts around an
// API's error body into its message and status: "API error: API key not
// valid. Please pass a valid API key. (INVALID_ARGUMENT, API_KEY_INVALID)".
func geminiMessage(msg string) string {
	msg = strings.TrimSpace(ansi.ReplaceAllString(msg, ""))
	const prefix = "[API Error: "
	if !strings.HasPrefix(msg, prefix) {
		return msg
	}
	first, rest, _ := strings.Cut(msg, "\n")
	inner := apiErrorWords(strings.TrimSuffix(strings.TrimPrefix(first, prefix), "]"))
	out := "API error: " + strings.TrimSpace(inner)
	if rest = strings.TrimSpace(rest); rest != "" {
		out += " " + rest
	}
	return out
}

// geminiAPIError is the error body of an API Gemini CLI calls.
type geminiAPIError struct {
	Error struct {
		Message string `json:"message"`
		Status  string `json:"status"`
		Details []struct {
			Reason string `json:"reason"`
		} `json:"details"`
	} `json:"error"`
}

// codes are the status and reasons an API error gives.
func (e geminiAPIError) codes() []string {
	var codes []string
	if e.Error.Status != "" {
		codes = append(codes, e.Error.Status)
	}
	for _, d := range e.Error.Details {
		if d.Reason != "" {
			codes = append(codes, d.Reason)
		}
	}
	return codes
}

// apiErrorWords is an API's error body in words, its message and codes;
// inner as it is when it is no such body.
func apiErrorWords(inner string) string {
	var body geminiAPIError
	if !strings.HasPrefix(inner, "{") || json.Unmarshal([]byte(inner), &body) != nil || body.Error.Message == "" {
		return inner
	}
	codes := body.codes()
	if len(codes) == 0 {
		return body.Error.Message
	}
	return body.Error.Message + " (" + strings.Join(codes, ", ") + ")"
}
