package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/storage"
)

// localAPIOn serves the local API of the store in data on a test server.
func localAPIOn(t *testing.T, data string) *httptest.Server {
	t.Helper()
	db, err := storage.Open(data, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := engine.NewService(engine.ServiceConfig{Store: db, Log: quiet, Members: engine.LocalOperator})
	srv := httptest.NewServer(localapi.NewServer(db, svc, quiet, "serve", "test", 0).Handler())
	t.Cleanup(srv.Close)
	return srv
}

// Every path segment that is not a well-formed run id is answered 404,
// on every route that names a run, and the answer does not repeat it.
func TestLocalAPIAnswers404ForWhatIsNoRunID(t *testing.T) {
	id, vars := waitingRun(t, "deliver-prd -- x")
	srv := localAPIOn(t, vars["GONOGO_DATA_DIR"])
	routes := []struct{ method, tail string }{
		{"GET", ""}, {"GET", "/artifacts"}, {"GET", "/artifacts/1/1"}, {"GET", "/artifacts/1/1/versions"},
		{"POST", "/decisions"}, {"POST", "/pause"}, {"POST", "/resume"},
	}
	ask := func(method, path string) (int, apiError) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path,
			strings.NewReader(`{"step":1,"attempt":1,"kind":"approve","key":"k","actor":"tester"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var we apiError
		_ = json.NewDecoder(resp.Body).Decode(&we)
		return resp.StatusCode, we
	}
	bad := []string{"x", "%2e%2e", "a%2Fb", "%00", "%1b%5b2K", strings.Repeat("a", 5000),
		strings.ToUpper(id), id + "0" + strings.Repeat("a", 40), "20260302-140000-", "20260302-140000-a1b2%0A"}
	for _, seg := range bad {
		for _, rt := range routes {
			code, we := ask(rt.method, "/v1/runs/"+seg+rt.tail)
			if code != http.StatusNotFound || we.Code != "not-found" || len(seg) > 2 && strings.Contains(we.Error, seg[:3]) {
				t.Errorf("%s /v1/runs/%.20s%s: %d %+v, want 404 not-found that does not repeat the segment", rt.method, seg, rt.tail, code, we)
			}
		}
	}
	// A well-formed id the store does not hold is not found either, its
	// artifacts included; the run the store holds is there.
	if code, we := ask("GET", "/v1/runs/20260302-140000-a1b2c3d4/artifacts"); code != http.StatusNotFound || we.Code != "not-found" {
		t.Errorf("artifacts of a run not held: %d %+v, want 404", code, we)
	}
	for _, tail := range []string{"", "/artifacts", "/artifacts/1/1"} {
		if code, we := ask("GET", "/v1/runs/"+id+tail); code != http.StatusOK {
			t.Errorf("GET %s%s: %d %+v, want 200", id, tail, code, we)
		}
	}
}

// apiError is the local API's answer to a request it refuses.
type apiError struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}
