package storage

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
)

// The stats of a recorded store read at once (DB.StatsRuns, in batches of
// a few runs) are the figures its runs were made to have, the same as
// read one run at a time, every record whole; through a service too.
func TestStatsRunsAtOnce(t *testing.T) {
	ctx := t.Context()
	rec := statstest.Generate(60)
	db := openStore(t, t.TempDir(), Options{NoSync: true})
	for _, r := range rec.Runs {
		for _, c := range r.Commits {
			if err := db.Commit(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer func(n int) { statsBatch = n }(statsBatch)
	statsBatch = 7
	svc := engine.NewService(engine.ServiceConfig{Store: db, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	for _, q := range []engine.StatsQuery{
		{Now: rec.Now},
		{Now: rec.Now, Since: statstest.T0.Add(5*24*time.Hour + 5*time.Hour)},
		{Now: rec.Now, Skill: statstest.Skills[1]},
	} {
		want := rec.Want(q)
		for _, src := range []struct {
			name string
			src  engine.StatsSource
		}{{"at once", db}, {"one by one", oneByOne{db}}, {"a service", svc}} {
			got, err := engine.ReadStats(ctx, src.src, q)
			if err != nil {
				t.Fatal(err)
			}
			if gj, wj := mustJSON(t, got), mustJSON(t, want); gj != wj {
				t.Errorf("%s, since %v skill %q:\ngot  %s\nwant %s", src.name, q.Since, q.Skill, gj, wj)
			}
		}
	}
	ids := append(statsIDs(t, db), "20990101-000000-gone")
	n := 0
	if err := db.StatsRuns(ctx, ids, func(sr engine.StatsRun) error {
		if sr.Run.ID != ids[n] {
			t.Errorf("run %d is %s, want %s", n, sr.Run.ID, ids[n])
		}
		n++
		return nil
	}); err != nil || n != len(rec.Runs) {
		t.Errorf("%d runs read of %d, %v", n, len(rec.Runs), err)
	}
	stop := errors.New("enough")
	n = 0
	if err := db.StatsRuns(ctx, ids, func(engine.StatsRun) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("an error of fn: %d runs read, %v", n, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var _ engine.StatsRunsReader = (*DB)(nil)

// A damaged event is an error naming its run, its place in the journal
// and what is wrong with it.
func TestStatsRunsNameADamagedEvent(t *testing.T) {
	rec := statstest.Generate(3)
	dir := t.TempDir()
	db, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rec.Runs {
		for _, c := range r.Commits {
			if err := db.Commit(t.Context(), c); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	id := rec.Runs[1].ID
	rawUpdate(t, dir, func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketJournal).Bucket([]byte(id)).Put(seqKey(2), []byte(`{"v":1,"seq":2,"type":"step-done-ish"}`))
	})
	db = openStore(t, dir, Options{ReadOnly: true})
	_, err = engine.ReadStats(t.Context(), db, engine.StatsQuery{Now: rec.Now})
	if err == nil || !strings.Contains(err.Error(), "run "+string(id)+": stored event 2: type") {
		t.Errorf("got %v", err)
	}
}
