package runner

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/gonogo/gonogo/engine"
)

// codexArgs start every Codex run: headless mode with its JSONL event
// stream, allowed outside a Git repository (gonogo runs wherever it is
// started). The prompt is read from stdin, which the "-" that ends the
// arguments asks for.
var codexArgs = []string{"exec", "--json", "--skip-git-repo-check"}

// Codex runs OpenAI Codex (`codex exec --json`) for a step. Its events give
// live progress (items: messages, commands, tool calls; and its own status
// lines such as "Reconnecting..."); the last agent message of a completed
// turn is the artifact, and turn.completed's usage the tokens. Codex
// reports no cost.
//
// Codex's sandbox lets the agent read the whole file system in every mode,
// so the skill's folder needs no flag: --add-dir would make it writable,
// which a step has no business doing.
type Codex struct {
	cfg Config
}

// NewCodex returns the codex runner. An empty cfg.Cmd means "codex".
func NewCodex(cfg Config) *Codex {
	if strings.TrimSpace(cfg.Cmd) == "" {
		cfg.Cmd = DefaultCodexCmd
	}
	return &Codex{cfg: cfg}
}

// Check reports whether the executable can be found.
func (c *Codex) Check() error { return check(c.cfg.Cmd) }

// codexFlags maps the runner options a workflow step may give to codex
// exec's flags.
var codexFlags = map[string]string{
	"model":   "--model",
	"sandbox": "--sandbox",
	"profile": "--profile",
}

// Run implements engine.Runner.
func (c *Codex) Run(ctx context.Context, job engine.Job, progress func(engine.Progress)) engine.Outcome {
	if job.DryRun {
		return engine.Outcome{NotRun: true}
	}
	opts, err := optionArgs("codex", codexFlags, job.Options)
	if err != nil {
		return engine.Outcome{Err: err}
	}
	args := append(append(append([]string(nil), codexArgs...), opts...), c.cfg.Args...)
	args = append(args, "-")
	return runStream(ctx, "codex", c.cfg, job, args, &codexStream{}, progress)
}

// codexStream folds the events of `codex exec --json`: thread.started,
// turn.started, item.started / item.updated / item.completed, error (a
// status line while Codex retries, then the failure itself), and
// turn.completed or turn.failed.
type codexStream struct {
	turns     int
	newTurn   bool            // the next model output starts a turn
	toolCalls int             // tool items seen
	tools     map[string]bool // their ids, so started and completed count once
	lastTool  string
	status    string
	answer    []byte // the last agent message
	usage     engine.Usage
	completed bool
	failed    string // turn.failed's message
	lastError string // the last error event that was not a retry notice
	lineCount
}

type codexEvent struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Item    rawRef `json:"item"`
	Error   struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage struct {
		InputTokens       int64 `json:"input_tokens"`
		CachedInputTokens int64 `json:"cached_input_tokens"`
		CacheWriteTokens  int64 `json:"cache_write_input_tokens"`
		OutputTokens      int64 `json:"output_tokens"`
	} `json:"usage"`
}

type codexItem struct {
	ID      string   `json:"id"`
	Type    string   `json:"type"`
	Text    jsonText `json:"text"` // the answer, decoded once
	Message string   `json:"message"`
	Server  string   `json:"server"`
	Tool    string   `json:"tool"`
}

// codexTools names the item types that are tool calls, as progress shows
// them.
var codexTools = map[string]string{
	"command_execution": "shell",
	"file_change":       "apply_patch",
	"mcp_tool_call":     "", // named after its server and tool
	"web_search":        "web_search",
}

func (s *codexStream) add(line []byte) (urgent bool) {
	var ev codexEvent
	if !s.decode(line, &ev) {
		return false
	}
	s.events++
	switch ev.Type {
	case "turn.started":
		s.newTurn = true
	case "item.started", "item.updated", "item.completed":
		return s.item(ev.Type, ev.Item)
	case "error":
		s.streamError(ev.Message)
		return true
	case "turn.completed":
		s.turnCompleted(ev)
		return true
	case "turn.failed":
		s.turnFailed(ev)
		return true
	}
	return false
}

// turnFailed keeps why the turn failed: its own message, else the last
// error event.
func (s *codexStream) turnFailed(ev codexEvent) {
	s.failed = strings.TrimSpace(ev.Error.Message)
	if s.failed == "" {
		s.failed = s.lastError
	}
}

// streamError shows an error event as the agent's status and keeps it as
// the last error, unless Codex is only reconnecting.
func (s *codexStream) streamError(message string) {
	msg := strings.TrimSpace(message)
	if !strings.HasPrefix(msg, "Reconnecting") {
		s.lastError = msg
	}
	s.status = msg
}

// turnCompleted adds a completed turn's tokens to the usage; Codex counts
// the cached input tokens within the input tokens.
func (s *codexStream) turnCompleted(ev codexEvent) {
	s.completed, s.status = true, ""
	s.usage.InputTokens += ev.Usage.InputTokens - ev.Usage.CachedInputTokens
	s.usage.CacheRead += ev.Usage.CachedInputTokens
	s.usage.CacheCreate += ev.Usage.CacheWriteTokens
	s.usage.OutputTokens += ev.Usage.OutputTokens
}

func (s *codexStream) item(kind string, raw rawRef) (urgent bool) {
	var it codexItem
	if len(raw) == 0 || json.Unmarshal(raw, &it) != nil {
		return false
	}
	if it.Type == "error" {
		// A warning Codex carries on with ("Falling back from WebSockets
		// to HTTPS transport").
		s.status = strings.TrimSpace(it.Message)
		return true
	}
	if it.Type == "todo_list" {
		return false
	}
	urgent = s.modelAtWork()
	name, tool := codexTools[it.Type]
	switch {
	case tool:
		s.toolItem(kind, it, name)
	case it.Type == "agent_message" && kind == "item.completed":
		s.answer = it.Text
	}
	return urgent
}

// modelAtWork takes any other item as the model at work: a turn when it
// follows the prompt or a tool's result.
func (s *codexStream) modelAtWork() (newTurn bool) {
	s.status = ""
	if s.newTurn || s.turns == 0 {
		s.turns++
		s.newTurn = false
		return true
	}
	return false
}

// toolItem counts a tool call once however many events its item gets
// (an MCP call is named after its server and tool); the model's next
// item after it completes is a new turn.
func (s *codexStream) toolItem(kind string, it codexItem, name string) {
	if it.Type == "mcp_tool_call" {
		name = strings.Trim(it.Server+"."+it.Tool, ".")
	}
	if s.tools == nil {
		s.tools = make(map[string]bool)
	}
	if it.ID == "" || !s.tools[it.ID] {
		s.toolCalls++
		s.lastTool = name
		if it.ID != "" {
			s.tools[it.ID] = true
		}
	}
	if kind == "item.completed" {
		s.newTurn = true
	}
}

func (s *codexStream) progress() engine.Progress {
	return engine.Progress{Turns: s.turns, ToolCalls: s.toolCalls, LastTool: s.lastTool, Status: s.status}
}

// codexNoise are stderr lines that never say why Codex failed.
var codexNoise = []string{"Reading prompt from stdin", "WARNING: proceeding, even though"}

func (s *codexStream) finish(o *engine.Outcome, x exit) {
	s.usage.Turns = s.turns
	o.Usage = s.usage
	switch {
	case s.failed != "":
		codexVendor.agentFailed(o, s.failed, "")
	case s.completed:
		o.Artifact = s.answer
	case o.Err != nil:
	case s.lastError != "":
		codexVendor.agentFailed(o, s.lastError, "")
	case x.code != 0 && stderrMessage(x.stderr, codexNoise...) != "":
		codexVendor.agentFailed(o, stderrMessage(x.stderr, codexNoise...), "")
	default:
		o.Err = noEndError("a turn.completed event", s.events, s.garbage, x)
	}
}
