package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
)

// statsRecords are records as a store keeps them: the golden run's and a
// recorded store's snapshots and plans, and every event of their
// journals, whole or as another writer might have written them (keys in
// another case, escaped strings, nulls, white space).
func statsRecords(t testing.TB) (runs [][2][]byte, events [][]byte) {
	t.Helper()
	g := goldenRun()
	runs = append(runs, [2][]byte{must(EncodeRun(g)), must(EncodePlan(g.Plan))})
	for _, ev := range goldenEvents(g) {
		events = append(events, must(EncodeEvent(ev, &g.Plan)), must(EncodeEvent(ev, nil)))
	}
	for _, r := range statstest.Generate(14).Runs {
		last := r.Commits[len(r.Commits)-1].Run
		runs = append(runs, [2][]byte{must(EncodeRun(last)), must(EncodePlan(last.Plan))})
		for _, c := range r.Commits {
			for _, ev := range c.Events {
				events = append(events, must(EncodeEvent(ev, &last.Plan)))
			}
		}
	}
	plan := `{"v":1,"input":"chain","steps":[{"skill":"a\u00e9","prompt":"long \"quoted\" text"},{"SKILL":"b"}]}`
	runs = append(runs,
		[2][]byte{[]byte(` { "V" : 1 , "id":"r\u0031","State":"waiting","mode":"checkpointed","steps":[{"n":1,"from_plan":true,"status":"done","attempts":[{"n":1,"usage":{"in":3}}]},{"n":2,"Skill":"own\nskill","status":"pending"}],"seq":7,"updated":"2026-03-02T10:00:00.5+01:00"} `), []byte(plan)},
		[2][]byte{[]byte(`{"v":1,"id":"r","state":"completed","mode":"guarded-auto","steps":null,"seq":null,"updated":null}`), []byte(plan)},
		[2][]byte{[]byte(`{"v":1,"id":"r","state":"completed","mode":"guarded-auto","steps":[]}`), []byte(`{"v":1,"steps":null}`)},
	)
	events = append(events,
		[]byte(`{"v":1,"seq":3,"time":"2026-03-02T10:00:00Z","Type":"decision","step":1,"attempt":2,"actor":"U\"1","decision":"redo","feedback":"shorter\tplease \ud83d\ude00","status":"queued","usage":{"in":1},"added":[{"skill":"x","p_tokens":null,"depends_on":[]}]}`),
		[]byte(`{"v":1,"seq":1,"type":"run-started","start":{"id":"r","plan_stored":true,"mode":"guarded-auto","setup":{"runner":"command","runner_cmd":"/bin/x","runner_args":["-a"],"skills":null}}}`),
		[]byte(`{"v":1,"seq":2,"type":"step-finished","step":1,"attempt":1,"result":"PRODUCED","cost_usd":1.25e-1,"artifact":true,"agent":"codex","runner":null,"skill":null,"start":null,"setup":null}`),
		[]byte(`{"v":1,"seq":9,"type":"step-started","step":1,"attempt":1,"s\u212aill":"kelvin","ResUlt":"EMPTY","prompt":"skipped"}`),
		[]byte(`{"v":1,"seq":4,"type":"setup-changed","setup":{"runner":"claude","runner_args":[],"skills":[]},"changes":[{"field":"runner","from":"a","to":"b"}]}`),
	)
	return runs, events
}

// The stats decoders read of each record what the whole decoders read of
// it, as statstest.StatsFields keeps it, and refuse what they refuse.
func TestStatsDecodersReadWhatTheFullOnesRead(t *testing.T) {
	runs, events := statsRecords(t)
	for i, rp := range runs {
		plan, err := DecodePlan(rp[1])
		if err != nil {
			t.Fatalf("run %d: plan: %v", i, err)
		}
		full, err := DecodeRun(rp[0], plan)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		got, err := DecodeStatsRun(rp[0], rp[1])
		if err != nil {
			t.Fatalf("run %d: stats: %v", i, err)
		}
		if want := statstest.StatsFields(engine.StatsRun{Run: full}).Run; !reflect.DeepEqual(got, want) {
			t.Errorf("run %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	stored := func() (engine.Plan, error) { return goldenRun().Plan, nil }
	for i, b := range events {
		full, err := DecodeEvent(b, stored)
		if err != nil {
			t.Fatalf("event %d %s: %v", i, b, err)
		}
		got, err := DecodeStatsEvent(b)
		if err != nil {
			t.Fatalf("event %d %s: stats: %v", i, b, err)
		}
		if want := statstest.StatsEvent(full); !reflect.DeepEqual(got, want) {
			t.Errorf("event %d %s:\n got %+v\nwant %+v", i, b, got, want)
		}
	}
}

// A damaged record is an error naming what is wrong, never a guess.
func TestStatsDecodersRefuseDamage(t *testing.T) {
	plan := []byte(`{"v":1,"steps":[{"skill":"a"}]}`)
	for _, tc := range []struct{ snap, plan, event, want string }{
		{snap: `{"v":1,"id":"r","state":"done?"}`, want: "state"},
		{snap: `{"v":99,"id":"r","state":"waiting"}`, want: "newer"},
		{snap: `{"v":1,"id":"r","state":"waiting","steps":[{"n":1,"from_plan":true},{"n":2,"from_plan":true}]}`, want: "refers to plan step 2 of 1"},
		{snap: `{"v":1,"id":"r","state":"waiting","seq":-1}`, want: "number -1"},
		{snap: `{"v":1,"id":"r","state":"waiting"`, want: "unexpected EOF after offset 33"},
		{snap: `{"v":1,"id":"r","state":"waiting"} x`, want: "invalid character 'x' after top-level value after offset 35"},
		{snap: `{"v":1,"id":"r","state":"waiting"}`, plan: `{"v":1,"steps":[{"skill":"a"}],}`, want: "plan: jsontext: invalid character ',' at start of value after offset 30"},
		{event: `{"v":1,"type":"no-such-event"}`, want: "type"},
		{event: `{"v":1,"type":"decision","decision":"maybe"}`, want: "decision"},
		{event: `{"v":1,"type":"decision","time":"yesterday"}`, want: "parsing time"},
		{event: `{"v":1,"type":"decision","step":1.5}`, want: "number 1.5"},
		{event: `{"v":1,"type":"decision","artifact":"yes"}`, want: `unmarshal JSON string into Go bool within "/artifact"`},
		{event: `{"v":1,"type":"decision","reason":"bad \q escape"}`, want: "invalid escape sequence `\\q` in string within \"/reason\" after offset 39"},
		{event: `{"v":1,"type":"decision","usage":{"in":01}}`, want: `invalid character '1' after object value (expecting ',' or '}') within "/usage" after offset 40`},
		{event: `{"v":1,"type":"decision","setup":{"runner":3}}`, want: `unmarshal JSON number into Go string within "/setup/runner"`},
		{event: "{\"v\":1,\"type\":\"decision\",\"actor\":\"a\nb\"}", want: "control character"},
		{event: `{"v":1,"type":"decision","actor":"ab`, want: `unexpected EOF within "/actor" after offset 36`},
		{event: `{"type":"decision"}`, want: "no version"},
		{event: `[1]`, want: "unmarshal JSON array into Go record.statsEventRecord"},
		{event: ``, want: "unexpected EOF"},
	} {
		var err error
		var full error
		if tc.event != "" {
			_, err = DecodeStatsEvent([]byte(tc.event))
			_, full = DecodeEvent([]byte(tc.event), func() (engine.Plan, error) { return engine.Plan{}, nil })
		} else {
			p := plan
			if tc.plan != "" {
				p = []byte(tc.plan)
			}
			_, err = DecodeStatsRun([]byte(tc.snap), p)
			full = errors.New("checked below")
			if pl, perr := DecodePlan(p); perr == nil {
				_, full = DecodeRun([]byte(tc.snap), pl)
			}
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s%s: got %v, want an error saying %q", tc.snap, tc.event, err, tc.want)
		}
		if full == nil {
			t.Errorf("%s%s: the whole decoder takes what the stats decoder refuses", tc.snap, tc.event)
		}
	}
}

// FuzzDecodeStats: what the whole decoders accept, the stats decoders
// read the same way; nothing makes them panic.
func FuzzDecodeStats(f *testing.F) {
	runs, events := statsRecords(f)
	for _, rp := range runs {
		f.Add(rp[0])
	}
	for _, b := range events {
		f.Add(b)
	}
	plan := goldenRun().Plan
	planBytes := must(EncodePlan(plan))
	f.Fuzz(func(t *testing.T, data []byte) {
		stored := func() (engine.Plan, error) { return plan, nil }
		ev, fullErr := DecodeEvent(data, stored)
		got, err := DecodeStatsEvent(data)
		if fullErr == nil {
			if err != nil {
				t.Fatalf("the whole decoder takes %q, the stats one says %v", data, err)
			}
			if want := statstest.StatsEvent(ev); !sameJSON(got, want) {
				t.Fatalf("%q:\n got %+v\nwant %+v", data, got, want)
			}
		}
		r, fullErr := DecodeRun(data, plan)
		gotRun, err := DecodeStatsRun(data, planBytes)
		if fullErr == nil {
			if err != nil {
				t.Fatalf("the whole decoder takes %q, the stats one says %v", data, err)
			}
			if want := statstest.StatsFields(engine.StatsRun{Run: r}).Run; !sameJSON(gotRun, want) {
				t.Fatalf("%q:\n got %+v\nwant %+v", data, gotRun, want)
			}
		}
	})
}

// sameJSON compares values as JSON, which writes a time in any zone as
// the instant and offset it is.
func sameJSON(a, b any) bool {
	return bytes.Equal(must(json.Marshal(a)), must(json.Marshal(b)))
}
