package main

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/internal/health"
	"github.com/gonogo/gonogo/internal/terminal"
)

// How gonogo serve connects to Slack: every failed attempt is logged with
// Slack's own error or the network's, retried with a backoff, and shown by
// /healthz; only Slack refusing a token stops serve, and only that is
// called a refused token.

// healthz reads /healthz.
func healthz(t *testing.T, addr string) (int, health.Status) {
	t.Helper()
	code, body := get(t, "http://"+addr+"/healthz")
	var h health.Status
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatalf("/healthz is not JSON: %v\n%s", err, body)
	}
	return code, h
}

// waitServe polls cond until it holds; its bound only guards against a
// hang.
func waitServe(t *testing.T, s *serving, what string, cond func() bool) {
	t.Helper()
	for deadline := hangguard.Deadline(t); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never saw %s:\n%s", what, s.stderr.String())
		}
	}
}

// noTokens fails the test when a token shows in what serve wrote or in
// /healthz.
func noTokens(t *testing.T, srv *fakeslack.Server, texts ...string) {
	t.Helper()
	for _, text := range texts {
		for _, tok := range []string{srv.AppToken(), srv.BotToken()} {
			if strings.Contains(text, tok) {
				t.Errorf("a token is shown: %q", text)
			}
		}
	}
}

func TestServeLogsSlacksErrorAndRetriesTheConnection(t *testing.T) {
	srv := fakeslack.New()
	defer srv.Close()
	srv.Fail("auth.test", 1, "not_allowed_token_type")
	srv.Fail("apps.connections.open", 2, "missing_scope")
	began := time.Now()
	s := startServe(serveVars(t, srv))
	defer s.cancel()
	addr := s.httpAddr(t)
	if err := srv.WaitConnected(hangguard.Context(t)); err != nil {
		t.Fatalf("serve did not connect after the failures: %v\n%s", err, s.stderr.String())
	}
	log := s.stderr.String()
	for _, want := range []string{
		`msg="connecting to Slack failed" call=auth.test err=not_allowed_token_type failures=1 retry_in=1s`,
		`msg="connecting to Slack failed" call=apps.connections.open err=missing_scope failures=1`,
		`msg="connecting to Slack failed" call=apps.connections.open err=missing_scope failures=2`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %s:\n%s", want, log)
		}
	}
	if strings.Contains(log, "refused by Slack") {
		t.Errorf("a scope error was reported as a refused token:\n%s", log)
	}
	var h health.Status
	var code int
	waitServe(t, s, "/healthz connected", func() bool {
		code, h = healthz(t, addr)
		return code == http.StatusOK
	})
	e := h.Slack.LastError
	if h.Status != "ok" || !h.Slack.Connected || e == nil || e.Error != "missing_scope" || e.Call != "apps.connections.open" ||
		e.Refused || e.Time.Before(began.Truncate(time.Second)) || e.Time.After(time.Now()) {
		t.Errorf("/healthz = %+v (last error %+v), want ok, connected, the last error missing_scope from apps.connections.open, at its time", h, e)
	}
	_, body := get(t, "http://"+addr+"/healthz")
	noTokens(t, srv, log, body)
	if _, metrics := get(t, "http://"+addr+"/metrics"); !strings.Contains(metrics, `gonogo_slack_connect_failures_total{call="apps.connections.open"} 2`) ||
		!strings.Contains(metrics, `gonogo_slack_connect_failures_total{call="auth.test"} 1`) {
		t.Errorf("/metrics does not count the failed attempts:\n%s", metrics)
	}
	if c := s.stop(t); c != terminal.ExitOK {
		t.Errorf("serve exited %d", c)
	}
}

func TestServeNeverCallsANetworkErrorARefusedToken(t *testing.T) {
	srv := fakeslack.New()
	defer srv.Close()
	// A loopback port nobody listens on: every connection is refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	vars := serveVars(t, srv)
	vars["SLACK_API_URL"] = "http://" + closed + "/api/"
	s := startServe(vars)
	defer s.cancel()
	addr := s.httpAddr(t)
	var h health.Status
	var code int
	waitServe(t, s, "the failed attempt in /healthz", func() bool {
		code, h = healthz(t, addr)
		return h.Slack.LastError != nil
	})
	e := h.Slack.LastError
	if code != http.StatusServiceUnavailable || h.Status != "unavailable" || h.Slack.Connected ||
		!strings.Contains(e.Error, "connection refused") || e.Refused || e.Call != "auth.test" {
		t.Errorf("/healthz = %d %+v (last error %+v), want 503, not connected, connection refused from auth.test, not a refused token", code, h, e)
	}
	waitServe(t, s, "a second attempt after the backoff", func() bool {
		return strings.Contains(s.stderr.String(), "failures=2")
	})
	log := s.stderr.String()
	if !strings.Contains(log, `msg="connecting to Slack failed" call=auth.test`) || !strings.Contains(log, "connection refused") {
		t.Errorf("the failed attempts are not logged with the network error:\n%s", log)
	}
	if strings.Contains(log, "refused by Slack") || strings.Contains(log, "invalid_auth") {
		t.Errorf("a refused connection was reported as a refused token:\n%s", log)
	}
	noTokens(t, srv, log)
	if c := s.stop(t); c != terminal.ExitOK {
		t.Errorf("serve exited %d, want 0 when stopped while retrying", c)
	}
}

func TestServeStopsWhenSlackRefusesAToken(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(srv *fakeslack.Server, vars map[string]string)
		want  string
	}{
		{"bot token", func(srv *fakeslack.Server, _ map[string]string) { srv.Fail("auth.test", 1, "token_revoked") },
			"SLACK_BOT_TOKEN refused by Slack (auth.test: token_revoked)"},
		{"app token", func(_ *fakeslack.Server, vars map[string]string) { vars["SLACK_APP_TOKEN"] = "xapp-1-not-this-one" },
			"SLACK_APP_TOKEN refused by Slack (apps.connections.open: invalid_auth)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeslack.New()
			defer srv.Close()
			vars := serveVars(t, srv)
			tc.setup(srv, vars)
			s := startServe(vars)
			defer s.cancel()
			select {
			case c := <-s.code:
				if c != terminal.ExitUsage || !strings.Contains(s.stderr.String(), tc.want) {
					t.Errorf("serve exited %d, want %d saying %q:\n%s", c, terminal.ExitUsage, tc.want, s.stderr.String())
				}
			case <-time.After(hangguard.Limit(t)):
				t.Fatalf("serve did not stop on a refused token:\n%s", s.stderr.String())
			}
			noTokens(t, srv, s.stderr.String())
			if strings.Contains(s.stderr.String(), "xapp-1-not-this-one") {
				t.Error("the refused token is shown")
			}
		})
	}
}
