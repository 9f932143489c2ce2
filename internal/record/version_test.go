package record

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

func TestCheckVersion(t *testing.T) {
	for _, tc := range []struct {
		v         int
		ok, newer bool
		text      string
	}{
		{v: Version, ok: true},
		{v: Version + 1, newer: true, text: "written by a newer gonogo"},
		{v: 0, text: "has no version"},
		{v: -1, text: "no gonogo writes it"},
	} {
		t.Run(fmt.Sprint(tc.v), func(t *testing.T) {
			err := CheckVersion(tc.v)
			if (err == nil) != tc.ok || errors.Is(err, ErrNewer) != tc.newer || err != nil && !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("CheckVersion(%d) = %v; want ok %v, newer %v, saying %q", tc.v, err, tc.ok, tc.newer, tc.text)
			}
		})
	}
}

// Every decoder refuses a record from a newer gonogo, and says so.
func TestDecodersRefuseANewerRecord(t *testing.T) {
	r := goldenRun()
	newer := func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), `"v":1`, fmt.Sprintf(`"v":%d`, Version+1), 1)
		if s == string(b) {
			t.Fatalf("the record carries no version: %s", b)
		}
		return []byte(s)
	}
	stored := func() (engine.Plan, error) { return r.Plan, nil }
	for what, decode := range map[string]func() error{
		"run":     func() error { _, err := DecodeRun(newer(EncodeRun(r)), r.Plan); return err },
		"plan":    func() error { _, err := DecodePlan(newer(EncodePlan(r.Plan))); return err },
		"event":   func() error { _, err := DecodeEvent(newer(EncodeEvent(goldenEvents(r)[1], nil)), stored); return err },
		"summary": func() error { _, err := DecodeSummary(r.ID, newer(EncodeSummary(r))); return err },
		"summaries": func() error {
			_, err := UnmarshalSummaries(newer(MarshalSummaries([]engine.RunSummary{r.Summary()})))
			return err
		},
	} {
		if err := decode(); !errors.Is(err, ErrNewer) || !strings.Contains(err.Error(), "written by a newer gonogo") {
			t.Errorf("%s from a newer gonogo: %v", what, err)
		}
	}
}
