package runner

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gonogo/gonogo/engine"
)

func TestStreamCounts(t *testing.T) {
	tests := []struct {
		name      string
		lines     []string
		turns     int
		toolCalls int
		lastTool  string
		garbage   int
		result    bool
	}{
		{
			name: "one message split over events is one turn",
			lines: []string{
				`{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"a"}]},"parent_tool_use_id":null}`,
				`{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","name":"Read"}]},"parent_tool_use_id":null}`,
				`{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","name":"Grep"},{"type":"tool_use","name":"Glob"}]}}`,
			},
			turns: 2, toolCalls: 3, lastTool: "Glob",
		},
		{
			name: "subagent messages are not turns but their tools are calls",
			lines: []string{
				`{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","name":"Task"}]},"parent_tool_use_id":null}`,
				`{"type":"assistant","message":{"id":"s1","content":[{"type":"tool_use","name":"Bash"}]},"parent_tool_use_id":"toolu_1"}`,
				`{"type":"assistant","message":{"id":"s2","content":[{"type":"text","text":"x"}]},"parent_tool_use_id":"toolu_1"}`,
			},
			turns: 1, toolCalls: 2, lastTool: "Bash",
		},
		{
			name: "messages without an id count one turn each",
			lines: []string{
				`{"type":"assistant","message":{"content":[{"type":"text","text":"a"}]}}`,
				`{"type":"assistant","message":{"content":[{"type":"text","text":"b"}]}}`,
			},
			turns: 2,
		},
		{
			name: "user and system events count nothing; odd content is skipped",
			lines: []string{
				`{"type":"system","subtype":"init"}`,
				`{"type":"user","message":{"role":"user","content":"plain text"}}`,
				`{"type":"assistant","message":{"id":"m1","content":"not blocks"}}`,
				`{"type":"assistant","message":"not an object"}`,
				`{"type":"future_event","data":[1,2]}`,
			},
			turns: 1,
		},
		{
			name: "garbage lines are counted, blank lines ignored",
			lines: []string{
				`warning: something`, ``, `   `, `{"type":"assistant"`, `[1,2]`, `"text"`,
				`{"type":"result","subtype":"success","result":7}`,
				`{"type":"result","subtype":"success","is_error":false,"result":"ok"}`,
			},
			garbage: 5, result: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s stream
			for _, l := range tc.lines {
				s.add([]byte(l))
			}
			if s.turns != tc.turns || s.toolCalls != tc.toolCalls || s.lastTool != tc.lastTool || s.garbage != tc.garbage || (s.result != nil) != tc.result {
				t.Errorf("got turns %d, tool calls %d, last tool %q, garbage %d, result %v; want %d, %d, %q, %d, %v",
					s.turns, s.toolCalls, s.lastTool, s.garbage, s.result != nil,
					tc.turns, tc.toolCalls, tc.lastTool, tc.garbage, tc.result)
			}
		})
	}
}

func TestSubtypeError(t *testing.T) {
	tests := []struct {
		r    resultEvent
		want string
	}{
		{resultEvent{Subtype: "error_max_turns"}, "agent stopped with error_max_turns"},
		{resultEvent{Subtype: "error_during_execution", Errors: []string{"tool crashed", " ", "API overloaded"}}, "agent stopped with error_during_execution: tool crashed; API overloaded"},
		{resultEvent{Subtype: "error_during_execution", Result: jsonText("partial")}, "agent stopped with error_during_execution: partial"},
		{resultEvent{}, "agent stopped with (none)"},
	}
	for _, tc := range tests {
		if got := subtypeError(&tc.r); got != tc.want {
			t.Errorf("subtypeError(%+v) = %q, want %q", tc.r, got, tc.want)
		}
	}
}

func collectLines(t *testing.T, data []byte, max int64, oneByte bool) ([]string, error) {
	t.Helper()
	var r = bytes.NewReader(data)
	var got []string
	var err error
	if oneByte {
		err = readLines(iotest.OneByteReader(r), max, func(l []byte) { got = append(got, string(l)) })
	} else {
		err = readLines(r, max, func(l []byte) { got = append(got, string(l)) })
	}
	return got, err
}

func TestReadLines(t *testing.T) {
	long := strings.Repeat("y", 200<<10) // past bufio's 64 KiB buffer
	tests := []struct {
		name    string
		data    string
		max     int64
		want    []string
		tooLong bool
	}{
		{"lines", "a\nbb\n\nccc", 10, []string{"a", "bb", "ccc"}, false},
		{"a line at the cap", "0123456789\n", 10, []string{"0123456789"}, false},
		{"a line past the cap", "ok\n01234567890\nnever\n", 10, []string{"ok"}, true},
		{"an unterminated line past the cap", "01234567890", 10, nil, true},
		{"a line past the buffer", "x\n" + long + "\nz\n", 1 << 20, []string{"x", long, "z"}, false},
		{"a line past the buffer and the cap", long + "\n", 100 << 10, nil, true},
	}
	for _, tc := range tests {
		for _, oneByte := range []bool{false, true} {
			got, err := collectLines(t, []byte(tc.data), tc.max, oneByte)
			if errors.Is(err, ErrOutputTooLarge) != tc.tooLong || (err != nil && !tc.tooLong) {
				t.Errorf("%s: err = %v, want too long %v", tc.name, err, tc.tooLong)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("%s: got %d lines, want %d", tc.name, len(got), len(tc.want))
			}
		}
	}
}

// FuzzReadLines checks readLines against splitting the whole input at
// newlines.
func FuzzReadLines(f *testing.F) {
	f.Add([]byte("a\nb\n"), int64(4))
	f.Add([]byte("\n\n\nabc"), int64(2))
	f.Add([]byte(strings.Repeat("z", 70000)+"\nq"), int64(80000))
	f.Fuzz(func(t *testing.T, data []byte, max int64) {
		if max <= 0 || max > 1<<20 {
			return
		}
		got, err := collectLines(t, data, max, false)
		var want []string
		tooLong := false
		for _, l := range strings.Split(string(data), "\n") {
			if int64(len(l)) > max {
				tooLong = true
				break
			}
			if l != "" {
				want = append(want, l)
			}
		}
		if errors.Is(err, ErrOutputTooLarge) != tooLong {
			t.Fatalf("err = %v, want too long %v", err, tooLong)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) != len(want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

// FuzzStream feeds arbitrary lines to the stream-json reader: it must never
// panic, and its counts must stay within what the input can hold.
func FuzzStream(f *testing.F) {
	for _, name := range []string{"success.jsonl", "auth-error.jsonl", "max-turns.jsonl", "garbage-then-result.jsonl"} {
		b, err := os.ReadFile(testdata("streams/" + name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"type":"assistant","message":{"id":1}}` + "\n" + `{"type":"result","usage":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s stream
		lines := bytes.Split(data, []byte("\n"))
		for _, l := range lines {
			s.add(l)
		}
		if s.turns < 0 || s.turns > len(lines) || s.events+s.garbage > len(lines) {
			t.Fatalf("turns %d, events %d, garbage %d from %d lines", s.turns, s.events, s.garbage, len(lines))
		}
		// Every tool call is a JSON object of its own.
		if s.toolCalls > bytes.Count(data, []byte("{")) {
			t.Fatalf("%d tool calls from %d objects at most", s.toolCalls, bytes.Count(data, []byte("{")))
		}
	})
}

// FuzzCodexStream and FuzzGeminiStream feed arbitrary lines to the codex
// and gemini event readers: they must never panic, their counts stay
// within what the input holds, and what finishing makes of them is consistent.
func FuzzCodexStream(f *testing.F) {
	fuzzAgentStream(f, "codex", func() eventStream { return &codexStream{} })
}

func FuzzGeminiStream(f *testing.F) {
	fuzzAgentStream(f, "gemini", func() eventStream { return &geminiStream{} })
}

func fuzzAgentStream(f *testing.F, dir string, fresh func() eventStream) {
	ents, err := os.ReadDir(testdata(dir))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			b, err := os.ReadFile(testdata(dir + "/" + e.Name()))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte(`{"type":"item.completed","item":[]}` + "\n" + `{"type":"result","stats":{"input":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := fresh()
		lines := bytes.Split(data, []byte("\n"))
		for _, l := range lines {
			s.add(l)
		}
		p := s.progress()
		if p.Turns < 0 || p.Turns > len(lines) || p.ToolCalls > len(lines) {
			t.Fatalf("progress %+v from %d lines", p, len(lines))
		}
		var o engine.Outcome
		s.finish(&o, exit{code: 1, stderr: string(data)})
		// An attempt either brought an answer or failed, never both.
		if len(o.Artifact) > 0 && (o.AgentError != "" || o.Err != nil) {
			t.Fatalf("an artifact and a failure: %+v", o)
		}
		if (o.AgentError == "") != (o.AgentErrorKind == "") {
			t.Fatalf("agent error %q with kind %q", o.AgentError, o.AgentErrorKind)
		}
	})
}
