package health

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
)

// TestCheckIsOKOnlyConnectedWithTheStore: /healthz is 200 "ok" only when
// serve is connected to Slack and reads its store; otherwise 503 says
// which, and the last failed connection is kept after a success.
func TestCheckIsOKOnlyConnectedWithTheStore(t *testing.T) {
	failed := &bot.ConnError{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Call: "auth.test", Err: "invalid_auth", Refused: true, Failures: 2}
	for _, tc := range []struct {
		c        bot.ConnState
		storeErr error
		code     int
		status   string
		store    string
	}{
		{bot.ConnState{Connected: true}, nil, http.StatusOK, "ok", "ok"},
		{bot.ConnState{Connected: true, LastError: failed}, nil, http.StatusOK, "ok", "ok"},
		{bot.ConnState{LastError: failed}, nil, http.StatusServiceUnavailable, "unavailable", "ok"},
		{bot.ConnState{Connected: true}, errors.New("store closed"), http.StatusServiceUnavailable, "unavailable", "store closed"},
	} {
		code, h := Check(tc.c, tc.storeErr)
		if code != tc.code || h.Status != tc.status || h.Store != tc.store || h.Slack.Connected != tc.c.Connected {
			t.Errorf("%+v, %v: %d %+v", tc.c, tc.storeErr, code, h)
		}
		if (tc.c.LastError == nil) != (h.Slack.LastError == nil) {
			t.Errorf("%+v: last error %+v", tc.c, h.Slack.LastError)
		}
	}
	_, h := Check(bot.ConnState{LastError: failed}, nil)
	b, _ := json.Marshal(h)
	want := `{"status":"unavailable","store":"ok","slack":{"connected":false,"last_error":{"time":"2026-01-02T03:04:05Z","call":"auth.test","error":"invalid_auth","token_refused":true,"failures":2}}}`
	if string(b) != want {
		t.Errorf("JSON\n%s\nwant\n%s", b, want)
	}
}

type fakeBot struct{ m *bot.Metrics }

func (f fakeBot) Connection() bot.ConnState { return bot.ConnState{Connected: true} }
func (f fakeBot) Metrics() *bot.Metrics     { return f.m }

type runs []engine.RunSummary

func (r runs) List(context.Context) ([]engine.RunSummary, error) { return r, nil }
func (r runs) Load(_ context.Context, id engine.RunID) (*engine.Run, error) {
	return &engine.Run{ID: id, State: engine.RunWaiting}, nil
}
func (r runs) StatsSource() engine.StatsSource { return noRuns{} }

// noRuns is a store of no runs.
type noRuns struct{}

func (noRuns) List(context.Context) ([]engine.RunSummary, error) { return nil, nil }
func (noRuns) RunWithJournal(_ context.Context, id engine.RunID) (*engine.Run, []engine.Event, error) {
	return nil, nil, engine.ErrNotFound
}
func (noRuns) ArtifactVersions(context.Context, engine.RunID, int, int) ([][]byte, error) {
	return nil, engine.ErrNotFound
}

// TestHandlerServesHealthAndMetrics: /healthz is JSON that is not cached;
// /metrics is Prometheus text.
func TestHandlerServesHealthAndMetrics(t *testing.T) {
	h := Handler(fakeBot{bot.NewMetrics()}, runs{{ID: "20260101-000000-abc", State: engine.RunWaiting}})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Cache-Control") != "no-store" || !strings.Contains(rec.Body.String(), `"status": "ok"`) {
		t.Errorf("/healthz: %d %v\n%s", rec.Code, rec.Header(), rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") || !strings.Contains(rec.Body.String(), "gonogo_") {
		t.Errorf("/metrics: %d %v\n%s", rec.Code, rec.Header(), rec.Body)
	}
}
