package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Whatever path a signed-in browser asks for, the answer is a page, a
// redirect the mux makes to a clean path, or 404: never a panic or a
// server error.
func TestPathsNeverFailTheServer(t *testing.T) {
	fx := newFixture(t)
	link, err := fx.srv.SignInURL("")
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	fx.srv.ServeHTTP(w, signInPress(link))
	ck := w.Result().Cookies()[0]
	id := string(fx.id)
	for _, p := range []string{
		"/", "/runs", "/runs/", "/runs/" + id, "/runs/" + id + "/", "/runs/" + id + "/steps", "/runs/" + id + "/steps/1",
		"/runs/" + id + "/steps/1/attempts/1", "/runs/" + id + "/steps/1/attempts/1/raw", "/runs/" + id + "/steps/1/diff?a=1&b=1",
		"/runs/" + id + "/steps/2/diff?a=1&b=1", "/runs/" + id + "/steps/1/diff?a=1&b=1&a=x", "/runs/" + strings.ToUpper(id),
		"/runs/" + id + "/steps/1/attempts/1/raw/x", "/runs/" + id + "%00", "/runs/%ff", "/runs//steps/1/attempts/1/raw",
		"/runs/" + id + "/steps/1/attempts/2147483648/raw", "/runs/" + id + "/steps/1000000/attempts/1000000/raw",
		"/runs/" + id + "/steps/1/diff?a=1000000&b=1", "/static/", "/static/../assets/run.html",
	} {
		r := httptest.NewRequest(http.MethodGet, "http://example.com"+p, nil)
		r.AddCookie(ck)
		w := httptest.NewRecorder()
		fx.srv.ServeHTTP(w, r)
		switch w.Code {
		case http.StatusOK, http.StatusNotFound, http.StatusMovedPermanently, http.StatusSeeOther, http.StatusTemporaryRedirect:
		default:
			t.Errorf("GET %s: %d %s", p, w.Code, w.Body.String())
		}
	}
}
