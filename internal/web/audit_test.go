package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
)

// The run page offers the run's audit trail, JSON and Markdown, and each
// download is the bytes gonogo export writes of the run at that moment.
func TestAuditTrailDownloadIsWhatExportWrites(t *testing.T) {
	f := newFixture(t)
	f.decide(engine.DecideRedo, 1, 1, "shorter, please")
	f.waiting(1, 2)
	f.decide(engine.DecideApprove, 1, 2, "")
	f.waiting(2, 1)
	at := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	f.srv = New(func(context.Context) (Source, error) { return held{f.db}, nil }, Options{Now: func() time.Time { return at }})
	f.ts = httptest.NewServer(f.srv)
	t.Cleanup(f.ts.Close)
	c := f.client()
	page := get(t, c, f.ts.URL+"/runs/"+string(f.id))
	base := "/runs/" + string(f.id) + "/audit?format="
	mustContain(t, "run page", page.body, `<a href="`+base+`json" download>JSON</a>`, `<a href="`+base+`md" download>Markdown</a>`)

	for format, ctype := range map[string]string{"json": "application/json; charset=utf-8", "md": "text/markdown; charset=utf-8"} {
		res := get(t, c, f.ts.URL+base+format)
		var want, stderr bytes.Buffer
		x := terminal.Export{Run: f.id, Format: format}
		if code := x.Write(t.Context(), f.db, at, &want, &stderr); code != terminal.ExitOK {
			t.Fatalf("export %s: exit %d %s", format, code, stderr.String())
		}
		if res.code != http.StatusOK || res.body != want.String() {
			t.Errorf("the %s download: %d, not what gonogo export writes:\n%s\nwant:\n%s", format, res.code, res.body, want.String())
		}
		if got := res.header.Get("Content-Type"); got != ctype {
			t.Errorf("the %s download's Content-Type %q", format, got)
		}
		if got, wantCD := res.header.Get("Content-Disposition"), `attachment; filename="`+string(f.id)+`-audit.`+format+`"`; got != wantCD {
			t.Errorf("the %s download's Content-Disposition %q, want %q", format, got, wantCD)
		}
	}

	// The trail is the run's: its decisions, by whom, on which attempt.
	var trail struct {
		Run struct {
			ID string `json:"id"`
		} `json:"run"`
		Journal []struct {
			Type, Kind, Actor, Feedback string
			Attempt                     int
		} `json:"journal"`
	}
	res := get(t, c, f.ts.URL+"/runs/"+string(f.id)+"/audit")
	if err := json.Unmarshal([]byte(res.body), &trail); err != nil {
		t.Fatalf("the default download is not JSON: %v\n%s", err, res.body)
	}
	var decisions []string
	for _, ev := range trail.Journal {
		if ev.Type == string(engine.EvDecision) {
			decisions = append(decisions, ev.Kind+" "+ev.Actor+" "+ev.Feedback)
		}
	}
	if trail.Run.ID != string(f.id) || strings.Join(decisions, "|") != "redo ana shorter, please|approve ana " {
		t.Errorf("the trail of run %s has decisions %q", trail.Run.ID, decisions)
	}
	for _, p := range []string{base + "xml", base + "JSON", "/runs/20260101-000000-abc/audit"} {
		if res := get(t, c, f.ts.URL+p); res.code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, res.code)
		}
	}
}
