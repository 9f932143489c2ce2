package bot

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// slackStatusLimit is the longest status or loading message Slack's
// assistant.threads.setStatus takes, in characters.
const slackStatusLimit = 50

// checkStatus checks a thread's loading status for any run: no more
// loading messages than Slack takes, none with a comma (slack-go joins
// them with commas, so Slack would split it), all within Slack's limit,
// and none able to mention anyone; the short status too.
func checkStatus(t testing.TB, r *engine.Run, progress map[int]engine.Progress, now time.Time) {
	t.Helper()
	status, loading := ThreadStatus(r, progress, now)
	if len(loading) > maxLoadingMessages {
		t.Fatalf("%d loading messages, Slack takes %d", len(loading), maxLoadingMessages)
	}
	if status == "" && len(loading) > 0 {
		t.Fatalf("loading messages %q without a status", loading)
	}
	if (status == "") != (shortStatus(r) == "") {
		t.Fatalf("status %q, short status %q", status, shortStatus(r))
	}
	for _, m := range append([]string{status, shortStatus(r)}, loading...) {
		if textLen(m) > slackStatusLimit || !utf8.ValidString(m) {
			t.Fatalf("status line of %d characters: %q", textLen(m), m)
		}
		checkDefanged(t, m)
	}
	for _, m := range loading {
		if strings.Contains(m, ",") || strings.TrimSpace(m) == "" {
			t.Fatalf("loading message %q: empty or with a comma", m)
		}
	}
}

// While a step runs its thread's status says which step and how far its
// agent got, within Slack's 50 characters: facts that do not fit whole are
// left out of a line (the loading messages carry them), a step name that
// does not fit is cut with an ellipsis; steps running at once share the
// thread's one status, each with a loading message; nothing runs, nothing
// shows.
func TestThreadStatus(t *testing.T) {
	s := newRun(t, goldenRunID, chainInput("deliver-prd", "deliver-user-stories", "deliver-acceptance-criteria"), engine.StartOptions{})
	s.produce(1, "PRD")
	s.decide(1, engine.DecideApprove, alice, "")
	s.start(2)
	now := s.now.Add(95 * time.Second)

	status, loading := ThreadStatus(s.r, nil, now)
	if status != "is running step 2/3: deliver-user-stories · 1m 35s" ||
		!slices.Equal(loading, []string{"step 2/3: deliver-user-stories · 1m 35s"}) {
		t.Errorf("before any progress: %q %q", status, loading)
	}
	if short := shortStatus(s.r); short != "is running step 2/3" {
		t.Errorf("short status %q", short)
	}

	progress := map[int]engine.Progress{2: {Turns: 4, ToolCalls: 1234, LastTool: "Read, then Write",
		Status: "API retry 2 of 10, overloaded (529) <!channel>", CostUSD: 0.08, Elapsed: 100 * time.Second}}
	status, loading = ThreadStatus(s.r, progress, now)
	if want := "is running step 2/3: deliver-user-stories · 1m 40s"; status != want {
		t.Errorf("status\n got %q\nwant %q", status, want)
	}
	want := []string{
		"step 2/3: deliver-user-stories · 4 turns · 1m 40s",
		"4 turns · 1m 40s · 1234 tool calls · $0.08",
		"API retry 2 of 10; overloaded (529) <\u2060!channel>",
		"last tool: Read; then Write",
	}
	if !slices.Equal(loading, want) {
		t.Errorf("loading messages\n got %q\nwant %q", loading, want)
	}
	checkStatus(t, s.r, progress, now)

	s.finish(2, engine.Finished{Result: engine.ResultProduced, Summary: "stories", Artifact: true, Size: 7})
	if status, loading := ThreadStatus(s.r, progress, now); status != "" || loading != nil || shortStatus(s.r) != "" {
		t.Errorf("no step runs, yet the status is %q %q", status, loading)
	}

	w := decomposed(t, 14)
	for n := 3; n <= 16; n++ {
		w.start(n)
	}
	status, loading = ThreadStatus(w.r, map[int]engine.Progress{3: {Turns: 2}}, w.now)
	if !strings.HasPrefix(status, "is running 14 steps at once: 3 · 4 · 5") || len(loading) != maxLoadingMessages ||
		loading[len(loading)-1] != "and 5 more steps" || !strings.Contains(loading[0], "2 turns") {
		t.Errorf("steps running at once: %q %q", status, loading)
	}
	if short := shortStatus(w.r); short != "is running 14 steps" {
		t.Errorf("short status of steps running at once: %q", short)
	}
	checkStatus(t, w.r, nil, w.now)
}

// A step whose name, or whose agent's words, would not fit keeps its
// status within Slack's limit: cut on a character (never inside an emoji
// or after a lone <), with an ellipsis, and still saying which step runs.
func TestThreadStatusOfLongWords(t *testing.T) {
	long := "deliver-" + strings.Repeat("🚀", 30) + "-prd"
	s := newRun(t, goldenRunID, chainInput(long, "b"), engine.StartOptions{})
	s.start(1)
	now := s.now.Add(time.Minute)
	progress := map[int]engine.Progress{1: {Turns: 3, Status: strings.Repeat("<!here> ", 20), LastTool: strings.Repeat("Bash,", 40)}}
	status, loading := ThreadStatus(s.r, progress, now)
	if !strings.HasPrefix(status, "is running step 1/2: deliver-🚀") || !strings.HasSuffix(status, "…") {
		t.Errorf("status %q: not the step, cut with an ellipsis", status)
	}
	if len(loading) < 2 || loading[1] != "3 turns · 1m 00s · 0 tool calls" {
		t.Errorf("the facts the name leaves no room for are not a loading message of their own: %q", loading)
	}
	checkStatus(t, s.r, progress, now)
}

// FuzzThreadStatus: whatever a skill is named and its agent says, every
// status line is within Slack's limit, valid UTF-8, defanged and free of
// commas where Slack would split it.
func FuzzThreadStatus(f *testing.F) {
	f.Add("deliver-prd", "Reconnecting...", "Read, Write", 4, 9)
	f.Add(strings.Repeat("é", 60), "<!channel> & [x](y)", strings.Repeat("🚀", 40), 1, 0)
	f.Fuzz(func(t *testing.T, skill, said, tool string, turns, tools int) {
		if strings.TrimSpace(skill) == "" || strings.ContainsAny(skill, "->,;\n") {
			t.Skip()
		}
		s := newRun(t, goldenRunID, chainInput(skill), engine.StartOptions{})
		s.start(1)
		checkStatus(t, s.r, map[int]engine.Progress{1: {Turns: turns, ToolCalls: tools, Status: said, LastTool: tool}}, s.now.Add(time.Hour))
	})
}

// checkDefanged fails when s holds anything Slack could read as markup:
// a token or an entity (< and & are followed by a word joiner), a link
// (so is ]) or a broadcast mention.
func checkDefanged(t testing.TB, s string) {
	t.Helper()
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '&', ']':
			if !strings.HasPrefix(s[i+1:], wordJoiner) {
				t.Fatalf("%q at %d is not defanged: %q", s[i], i, around(s, i))
			}
		case '@':
			if broadcast(s[i+1:]) {
				t.Fatalf("a broadcast mention at %d: %q", i, around(s, i))
			}
		}
	}
}

func TestDefang(t *testing.T) {
	for in, want := range map[string]string{
		"plain words":                          "plain words",
		"<!channel> <@U1> <!here|here> <#C1>":  "<\u2060!channel> <\u2060@U1> <\u2060!here|here> <\u2060#C1>",
		"&lt;!channel&gt;":                     "&\u2060lt;!channel&\u2060gt;",
		"[your bank](https://evil.example)":    "[your bank]\u2060(https://evil.example)",
		"![logo](https://x.example/a.png)":     "![logo]\u2060(https://x.example/a.png)",
		"[ref]: https://evil.example":          "[ref]\u2060: https://evil.example",
		"hi @here and @Channel, @everyone; @x": "hi @\u2060here and @\u2060Channel, @\u2060everyone; @x",
	} {
		if got := defang(in); got != want {
			t.Errorf("defang(%q)\n got %q\nwant %q", in, got, want)
		}
		checkDefanged(t, defang(in))
	}
}

// An artifact's preview is rendered Markdown in which the agent's text can
// neither mention anyone nor link under a false label: every vector shows
// as the text it is. Code (here a block the cut leaves open, which the
// preview closes) is the agent's, as it wrote it.
func TestPreviewIsDefangedMarkdown(t *testing.T) {
	artifact := "# Plan\n\nPing <!channel>, <!here>, <@U0EVIL>, <#C0EVIL>, <!subteam^S0EVIL> and @here, @channel, @everyone.\n" +
		"Pay at [your bank](https://evil.example) or <https://evil.example|your bank>; ![logo](https://evil.example/x.png)\n" +
		"[ref]: https://evil.example\n&lt;!channel&gt; &#60;!here&#62;\n```\n<!channel> in code\n"
	b, ok := preview(artifact)
	if !ok {
		t.Fatal("no preview")
	}
	want := "# Plan\n\nPing <\u2060!channel>, <\u2060!here>, <\u2060@U0EVIL>, <\u2060#C0EVIL>, <\u2060!subteam^S0EVIL> and @\u2060here, @\u2060channel, @\u2060everyone.\n" +
		"Pay at [your bank]\u2060(https://evil.example) or <\u2060https://evil.example|your bank>; ![logo]\u2060(https://evil.example/x.png)\n" +
		"[ref]\u2060: https://evil.example\n&\u2060lt;!channel&\u2060gt; &\u2060#60;!here&\u2060#62;\n```\n<!channel> in code\n```"
	if b.Type != slack.MBTMarkdown || b.Text != want {
		t.Errorf("preview\n got %q\nwant %q", b.Text, want)
	}
	checkDefangedOutsideCode(t, b.Text)
	blocks := []slack.Block{b}
	raw, err := json.Marshal(blocks)
	if err != nil {
		t.Fatal(err)
	}
	checkMarkup(t, raw)
	if err := checkBlocks(blocks); err != nil {
		t.Fatal(err)
	}
}

// The preview stays within the markdown block's limit however large the
// artifact, counts what it leaves out, and closes a code block it cuts.
func TestPreviewOfALargeArtifact(t *testing.T) {
	body := "```\n" + strings.Repeat("<&]@here line\n", 20000)
	b, ok := preview(body)
	if !ok {
		t.Fatal("no preview")
	}
	if n := textLen(b.Text); n > previewBudget+200 {
		t.Errorf("preview of %d characters, budget %d", n, previewBudget)
	}
	if !strings.HasSuffix(b.Text, "```\n\n_… 19,986 more lines in the attached file_") {
		t.Errorf("preview ends %q", b.Text[max(0, len(b.Text)-80):])
	}
	if openFence(strings.Split(b.Text, "\n")) != "" {
		t.Errorf("the preview leaves a code block open:\n%s", b.Text)
	}
	if _, ok := preview(" \n\t\n"); ok {
		t.Error("a blank artifact has a preview")
	}
}

func TestOpenFence(t *testing.T) {
	for _, tt := range []struct {
		lines []string
		want  string
	}{
		{[]string{"text"}, ""},
		{[]string{"```go", "x"}, "```"},
		{[]string{"```go", "x", "```"}, ""},
		{[]string{"````", "```", "x"}, "````"},
		{[]string{"~~~", "```", "~~~"}, ""},
		{[]string{"    ```", "indented code, no fence"}, ""},
		{[]string{"~~~~", "~~~"}, "~~~~"},
	} {
		if got := openFence(tt.lines); got != tt.want {
			t.Errorf("openFence(%q) = %q, want %q", tt.lines, got, tt.want)
		}
	}
}

// tableRows reads a message's table as text, a row a line: raw text as
// it is, a mention as @id.
func tableRows(t *testing.T, blocks []slack.Block) []string {
	t.Helper()
	var tables []*slack.TableBlock
	for _, b := range blocks {
		if tb, ok := b.(*slack.TableBlock); ok {
			tables = append(tables, tb)
		}
	}
	if len(tables) != 1 {
		t.Fatalf("%d tables, want 1", len(tables))
	}
	var rows []string
	for _, row := range tables[0].Rows {
		var cells []string
		for _, c := range row {
			switch x := c.(type) {
			case *slack.TableRawTextCell:
				cells = append(cells, x.Text)
			case *slack.TableRichTextCell:
				var b strings.Builder
				for _, el := range x.Elements {
					for _, e := range el.(*slack.RichTextSection).Elements {
						switch y := e.(type) {
						case *slack.RichTextSectionTextElement:
							b.WriteString(y.Text)
						case *slack.RichTextSectionUserElement:
							b.WriteString("@" + y.UserID)
						}
					}
				}
				cells = append(cells, b.String())
			}
		}
		rows = append(rows, strings.Join(cells, " | "))
	}
	return rows
}

// The end of a run is a table of its steps: result, what became of each,
// who decided and what it cost; people are mentions, anyone else text.
func TestEndTable(t *testing.T) {
	s := newRun(t, goldenRunID, chainInput("deliver-prd", "deliver-user-stories", "deliver-acceptance-criteria"), engine.StartOptions{Quorum: 2})
	s.produce(1, "PRD")
	s.decide(1, engine.DecideApprove, alice, "")
	s.decide(1, engine.DecideApprove, bob, "")
	s.fail(2, "boom")
	s.decide(2, engine.DecideRedo, engine.RetryActor, "")
	s.produce(2, "stories")
	s.decide(2, engine.DecideEdit, "ana <!channel>", "")
	s.produce(3, "criteria")
	s.decide(3, engine.DecideAbort, bob, "")
	got := tableRows(t, Halt(s.r, s.view()))
	want := []string{
		"Step | Result | Decision | Who | Cost",
		"1. deliver-prd | 🟢 PRODUCED | approved | @" + alice + ", @" + bob + " | $0.42",
		"2. deliver-user-stories | 🟢 PRODUCED | edited | ana <\u2060!channel> | $0.47",
		"3. deliver-acceptance-criteria | 🟢 PRODUCED | aborted here | @" + bob + " | $0.42",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
