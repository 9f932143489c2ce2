package localapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A decision is refused before anything is decided when it is over the
// holder's artifact limit (413, naming the limit) or carries a body
// without being an edit (400). The server has no store: none is reached.
func TestDecisionRefusedBeforeDeciding(t *testing.T) {
	const limit = 100
	srv := httptest.NewServer(NewServer(nil, nil, slog.New(slog.DiscardHandler), "serve", "test", limit).Handler())
	defer srv.Close()
	body := func(n int) string { return `"body":"` + strings.Repeat("QUJD", n/3) + `"` } // base64 of n bytes
	for _, tc := range []struct {
		name, json string
		status     int
		code, says string
	}{
		{"edit over the limit", `{"step":1,"attempt":1,"kind":"edit","key":"k","actor":"a",` + body(120) + `}`,
			http.StatusRequestEntityTooLarge, "too-large", "the edited artifact is 120 bytes, over the 100-byte artifact limit (GONOGO_MAX_ARTIFACT)"},
		{"request far over the limit", `{"step":1,"attempt":1,"kind":"edit","key":"k","actor":"a",` + body(3<<20) + `}`,
			http.StatusRequestEntityTooLarge, "too-large", "over the 100-byte artifact limit (GONOGO_MAX_ARTIFACT)"},
		{"approve with a body", `{"step":1,"attempt":1,"kind":"approve","key":"k","actor":"a",` + body(3) + `}`,
			http.StatusBadRequest, "bad-request", "only an edit carries a body, not approve"},
		{"edit without a key", `{"step":1,"attempt":1,"kind":"edit","actor":"a",` + body(3) + `}`,
			http.StatusBadRequest, "bad-request", "a decision needs a key and an actor"},
	} {
		res, err := http.Post(srv.URL+"/v1/runs/20260302-140000-a1b2c3d4/decisions", "application/json", strings.NewReader(tc.json))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var we wireError
		if json.Unmarshal(b, &we) != nil || res.StatusCode != tc.status || we.Code != tc.code || !strings.Contains(we.Error, tc.says) {
			t.Errorf("%s: %d %s, want %d %s %q", tc.name, res.StatusCode, b, tc.status, tc.code, tc.says)
		}
	}
}
