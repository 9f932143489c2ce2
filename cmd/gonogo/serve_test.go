package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/internal/terminal"
)

// gonogo serve, in-process, against the fake Slack: the wiring of the
// environment, the store, the engine, the bot and the HTTP endpoints.

// serving is a gonogo serve running in the background.
type serving struct {
	stdout, stderr *syncBuffer
	cancel         context.CancelFunc
	code           chan int
}

// connected waits until the serve s has connected to srv and returns a
// context for the rest of the test's waits, which only guard against a
// hang; it fails the test otherwise.
func (s *serving) connected(t *testing.T, srv *fakeslack.Server) context.Context {
	t.Helper()
	ctx := hangguard.Context(t)
	if err := srv.WaitConnected(ctx); err != nil {
		t.Fatalf("serve did not connect to Slack: %v\n%s", err, s.stderr.String())
	}
	return ctx
}

func startServe(vars map[string]string) *serving {
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{stdout: &syncBuffer{}, stderr: &syncBuffer{}, cancel: cancel, code: make(chan int, 1)}
	go func() {
		s.code <- realMain(ctx, env{
			args: []string{"serve"}, stdin: strings.NewReader(""), stdout: s.stdout, stderr: s.stderr,
			lookup: envconfig.MapLookuper(vars), getenv: func(k string) string { return vars[k] },
		})
	}()
	return s
}

// stop ends serve as a signal does and returns its exit code.
func (s *serving) stop(t *testing.T) int {
	t.Helper()
	s.cancel()
	select {
	case c := <-s.code:
		return c
	case <-time.After(hangguard.Limit(t)):
		t.Fatal("gonogo serve did not stop")
		return -1
	}
}

var httpAddrRE = regexp.MustCompile(`msg="serving /healthz and /metrics" addr=(\S+)`)

// httpAddr waits for the log line that names the bound address.
func (s *serving) httpAddr(t *testing.T) string {
	t.Helper()
	deadline := hangguard.Deadline(t)
	for time.Now().Before(deadline) {
		if m := httpAddrRE.FindStringSubmatch(s.stderr.String()); m != nil {
			return m[1]
		}
		select {
		case c := <-s.code:
			t.Fatalf("gonogo serve exited %d before serving HTTP:\n%s", c, s.stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	t.Fatalf("gonogo serve never logged its HTTP address:\n%s", s.stderr.String())
	return ""
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func serveVars(t *testing.T, srv *fakeslack.Server) map[string]string {
	return map[string]string{
		"USER":              "tester",
		"SLACK_API_URL":     srv.APIURL(),
		"SLACK_APP_TOKEN":   srv.AppToken(),
		"SLACK_BOT_TOKEN":   srv.BotToken(),
		"GONOGO_DATA_DIR":   t.TempDir(),
		"GONOGO_SKILLS_DIR": filepath.Join(exampleDir(t), "skills"),
		"GONOGO_RUNNER":     "dry-run",
		"GONOGO_HTTP_ADDR":  "127.0.0.1:0",
		"GONOGO_LOG_LEVEL":  "debug",
	}
}

func TestServeRunsAChainAndServesHealthAndMetrics(t *testing.T) {
	srv := fakeslack.New()
	defer srv.Close()
	vars := serveVars(t, srv)
	s := startServe(vars)
	defer s.cancel()
	addr := s.httpAddr(t)
	ctx := s.connected(t, srv)
	// The bot notes the connection a moment after the fake Slack sees it.
	code, body := get(t, "http://"+addr+"/healthz")
	for deadline := hangguard.Deadline(t); code != http.StatusOK && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		code, body = get(t, "http://"+addr+"/healthz")
	}
	if code != http.StatusOK || !strings.Contains(body, `"status": "ok"`) || !strings.Contains(body, `"connected": true`) {
		t.Errorf("/healthz = %d %q, want 200, status ok, connected", code, body)
	}

	const ch = "C0SERVE"
	env := srv.SendSlashCommand(slack.SlashCommand{UserID: "U0SERVE", ChannelID: ch, Text: "chain deliver-prd -> measure-experiment-design"})
	if _, err := srv.WaitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 2; n++ {
		prefix := fmt.Sprintf("*Step %d of 2", n)
		m, err := srv.WaitMessage(ctx, ch, func(m fakeslack.Message) bool {
			return strings.HasPrefix(m.Text, prefix) && len(m.Buttons()) > 0 && m.Buttons()[0].Text == "Approve"
		})
		if err != nil {
			t.Fatalf("no step %d message: %v\n%s", n, err, s.stderr.String())
		}
		env, err := srv.Click("U0SERVE", ch, m.TS, "Approve")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := srv.WaitAck(ctx, env); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := srv.WaitMessage(ctx, ch, func(m fakeslack.Message) bool { return strings.Contains(m.Rendered, "Run complete") }); err != nil {
		t.Fatalf("the run did not complete: %v", err)
	}

	code, metrics := get(t, "http://"+addr+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{
		`gonogo_runs{state="completed"} 1`,
		`gonogo_slack_connected 1`,
		`gonogo_slack_calls_total{method="chat.postMessage"}`,
		`gonogo_ack_latency_seconds_count 3`, // the command and two clicks
		"# TYPE gonogo_ack_latency_seconds histogram\n",
		"\ngo_goroutines ", "\nprocess_resident_memory_bytes ", "\nprocess_open_fds ",
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, metrics)
		}
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("Block Kit limits broken: %v", v)
	}

	if code := s.stop(t); code != terminal.ExitOK {
		t.Errorf("serve exited %d after a signal, want 0:\n%s", code, s.stderr.String())
	}
	out := s.stdout.String() + s.stderr.String()
	for _, tok := range []string{vars["SLACK_APP_TOKEN"], vars["SLACK_BOT_TOKEN"]} {
		if strings.Contains(out, tok) {
			t.Errorf("a token appears in serve's output")
		}
	}
}

func TestServeRefusesBadTokensAtStart(t *testing.T) {
	srv := fakeslack.New()
	defer srv.Close()
	const secret = "s3cr3t-t0ken-value"
	cases := []struct {
		name     string
		set      map[string]string
		wantWord string
	}{
		{"no app token", map[string]string{"SLACK_APP_TOKEN": ""}, "SLACK_APP_TOKEN is not set"},
		{"no bot token", map[string]string{"SLACK_BOT_TOKEN": ""}, "SLACK_BOT_TOKEN is not set"},
		{"bot token as app token", map[string]string{"SLACK_APP_TOKEN": "xoxb-" + secret}, "SLACK_APP_TOKEN does not look like an app-level token"},
		{"user token as bot token", map[string]string{"SLACK_BOT_TOKEN": "xoxp-" + secret}, "SLACK_BOT_TOKEN does not look like a bot token"},
		{"bot token Slack refuses", map[string]string{"SLACK_BOT_TOKEN": "xoxb-" + secret}, "SLACK_BOT_TOKEN refused by Slack"},
		{"app token Slack refuses", map[string]string{"SLACK_APP_TOKEN": "xapp-" + secret}, "SLACK_APP_TOKEN refused by Slack"},
		{"API URL without its slash", map[string]string{"SLACK_API_URL": strings.TrimSuffix(srv.APIURL(), "/")}, `SLACK_API_URL must end with "/"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vars := serveVars(t, srv)
			for k, v := range c.set {
				if v == "" {
					delete(vars, k)
				} else {
					vars[k] = v
				}
			}
			s := startServe(vars)
			defer s.cancel()
			var code int
			select {
			case code = <-s.code:
			case <-time.After(hangguard.Limit(t)):
				t.Fatalf("serve did not stop on a bad token:\n%s", s.stderr.String())
			}
			out := s.stdout.String() + s.stderr.String()
			if code != terminal.ExitUsage {
				t.Errorf("exit %d, want %d:\n%s", code, terminal.ExitUsage, out)
			}
			if !strings.Contains(out, c.wantWord) {
				t.Errorf("the message does not say %q:\n%s", c.wantWord, out)
			}
			if strings.Contains(out, secret) {
				t.Errorf("the token appears in the output:\n%s", out)
			}
		})
	}
}

// serve starts with a skills folder holding every broken shape, and logs
// each skill that cannot be used once, the dispatch skill whose leaf agent
// is missing included.
func TestServeLogsEachSkillProblemOnceAtStart(t *testing.T) {
	srv := fakeslack.New()
	defer srv.Close()
	vars := serveVars(t, srv)
	vars["GONOGO_SKILLS_DIR"] = shapesDir(t)
	s := startServe(vars)
	s.httpAddr(t)
	if code := s.stop(t); code != terminal.ExitOK {
		t.Fatalf("serve exited %d:\n%s", code, s.stderr.String())
	}
	logs := s.stderr.String()
	for _, name := range []string{"unclosed-front-matter", "name-mismatch", "not-utf8", "yaml-unreadable",
		"description-is-a-list", "no-skill-file", "Bad_Name", "utility-pm-critic"} {
		if n := strings.Count(logs, "skill problem=\""+filepath.Join(shapesDir(t), name)); n != 1 {
			t.Errorf("%s: logged %d times, want once:\n%s", name, n, logs)
		}
	}
}

// A chain whose context starts with an installed skill (a forgotten arrow)
// runs as written, and the thread says what was probably meant.
func TestServeWarnsOfAForgottenArrow(t *testing.T) {
	srv := fakeslack.New()
	defer srv.Close()
	s := startServe(serveVars(t, srv))
	defer s.cancel()
	ctx := s.connected(t, srv)
	const ch = "C0ARROW"
	env := srv.SendSlashCommand(slack.SlashCommand{UserID: "U0ARROW", ChannelID: ch, Text: "chain deliver-prd measure-experiment-design -- saved searches"})
	if _, err := srv.WaitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	// Slack's text escapes ">" as "&gt;", which Slack shows as ">".
	want := "did you mean `deliver-prd -&gt; measure-experiment-design`?"
	if _, err := srv.WaitMessage(ctx, ch, func(m fakeslack.Message) bool { return strings.Contains(m.Rendered, want) }); err != nil {
		t.Fatalf("no message in the thread says %q: %v\n%s", want, err, s.stderr.String())
	}
	if _, err := srv.WaitMessage(ctx, ch, func(m fakeslack.Message) bool { return strings.HasPrefix(m.Text, "*Step 1 of 1") }); err != nil {
		t.Fatalf("the chain did not run as one step: %v", err)
	}
	if code := s.stop(t); code != terminal.ExitOK {
		t.Errorf("serve exited %d:\n%s", code, s.stderr.String())
	}
}

// GONOGO_CONFIRM_START reaches the bot: a chain waits at its preview, and
// runs once Start is pressed.
func TestServeConfirmStartWaitsForStart(t *testing.T) {
	srv := fakeslack.New()
	defer srv.Close()
	vars := serveVars(t, srv)
	vars["GONOGO_CONFIRM_START"] = "true"
	s := startServe(vars)
	defer s.cancel()
	ctx := s.connected(t, srv)
	const ch = "C0CONFIRM"
	env := srv.SendSlashCommand(slack.SlashCommand{UserID: "U0SERVE", ChannelID: ch, Text: "chain deliver-prd"})
	if _, err := srv.WaitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	preview, err := srv.WaitMessage(ctx, ch, func(m fakeslack.Message) bool { return strings.Contains(m.Rendered, "Preview") })
	if err != nil {
		t.Fatalf("no preview: %v\n%s", err, s.stderr.String())
	}
	for _, m := range srv.Messages(ch) {
		if strings.HasPrefix(m.Text, "*Step 1 of 1") {
			t.Fatal("the step ran before Start")
		}
	}
	if env, err = srv.Click("U0SERVE", ch, preview.TS, "Start"); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.WaitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.WaitMessage(ctx, ch, func(m fakeslack.Message) bool { return strings.HasPrefix(m.Text, "*Step 1 of 1") }); err != nil {
		t.Fatalf("no step after Start: %v", err)
	}
	if code := s.stop(t); code != terminal.ExitOK {
		t.Errorf("serve exited %d:\n%s", code, s.stderr.String())
	}
}
