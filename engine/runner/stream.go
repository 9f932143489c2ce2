package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

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
	events    int // lines that were JSON objects
	garbage   int // lines that were not
	result    *resultEvent
}

// event holds the fields gonogo reads from any stream-json event.
type event struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	Version         string          `json:"claude_code_version"` // on the init event
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	Message         json.RawMessage `json:"message"`
}

// message is the part of an assistant event's message gonogo reads.
type message struct {
	ID      string          `json:"id"`
	Content json.RawMessage `json:"content"`
}

type contentBlock struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// resultEvent is the final event of a run: the answer, its cost and usage.
type resultEvent struct {
	Subtype      string   `json:"subtype"`
	IsError      bool     `json:"is_error"`
	Result       string   `json:"result"`
	NumTurns     int      `json:"num_turns"`
	TotalCostUSD float64  `json:"total_cost_usd"`
	Errors       []string `json:"errors"`
	Usage        struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

// add takes one line of output and reports whether it began a new turn of
// the main agent.
func (s *stream) add(line []byte) (newTurn bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return false
	}
	var ev event
	if line[0] != '{' || json.Unmarshal(line, &ev) != nil {
		s.garbage++
		return false
	}
	switch ev.Type {
	case "assistant":
		s.events++
		return s.assistant(ev)
	case "system":
		s.events++
		if ev.Subtype == "init" {
			s.perEvent = countsEveryEvent(ev.Version)
		}
	case "user":
		// Claude Code before 2.1 counts the main agent's tool results as
		// turns too.
		s.events++
		if s.perEvent && ev.ParentToolUseID == nil {
			s.turns++
			return true
		}
	case "result":
		var r resultEvent
		if json.Unmarshal(line, &r) != nil {
			s.garbage++
			return false
		}
		s.events++
		s.result = &r
	default:
		s.events++
	}
	return false
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
		if s.perEvent || m.ID == "" || !s.ids[m.ID] {
			if s.ids == nil {
				s.ids = make(map[string]bool)
			}
			if m.ID != "" {
				s.ids[m.ID] = true
			}
			s.turns++
			newTurn = true
		}
	}
	var blocks []contentBlock
	if bytes.HasPrefix(bytes.TrimSpace(m.Content), []byte("[")) && json.Unmarshal(m.Content, &blocks) == nil {
		for _, b := range blocks {
			if b.Type == "tool_use" {
				s.toolCalls++
				if b.Name != "" {
					s.lastTool = b.Name
				}
			}
		}
	}
	return newTurn
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

// readLines calls fn with every line r yields, without its newline. fn must
// not keep the slice. Memory stays bounded by max: a line longer than max
// bytes stops the reading with an error wrapping ErrOutputTooLarge.
func readLines(r io.Reader, max int64, fn func([]byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // a line longer than br's buffer, collected piece by piece
	for {
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if int64(len(long)+len(frag)) > max {
				return tooLargeError("a stream-json event", max)
			}
			long = append(long, frag...)
			continue
		}
		line := frag
		if len(long) > 0 {
			long = append(long, frag...)
			line = long
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		if int64(len(line)) > max {
			return tooLargeError("a stream-json event", max)
		}
		if len(line) > 0 {
			fn(line)
		}
		long = long[:0]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// readCapped reads all of r, up to max bytes. More than max bytes is an
// error wrapping ErrOutputTooLarge, returned with the first max bytes.
func readCapped(r io.Reader, max int64) ([]byte, error) {
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, max+1))
	if n > max {
		return buf.Bytes()[:max], tooLargeError("the agent's output", max)
	}
	return buf.Bytes(), err
}
