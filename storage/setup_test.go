package storage

import (
	"reflect"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
)

func TestSetupIsRecordedAndChangesAreJournaled(t *testing.T) {
	db := openStore(t, t.TempDir(), Options{})
	c := newClock()
	setup := engine.Setup{Runner: "command", RunnerCmd: "/opt/agent", RunnerArgs: []string{"--fast"},
		Skills: []string{"/srv/skills"}, Workflows: "/srv/workflows", Policy: "/srv/policy.yaml"}
	evs, err := engine.NewRun("r1", testPlan(2), engine.StartOptions{StartedBy: "ann", Setup: &setup}, c.now())
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{t: t, db: db, clock: c, run: &engine.Run{}}
	r.commit(evs, nil, nil, "")

	got, err := db.Load(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Setup, &setup) {
		t.Fatalf("stored setup = %+v, want %+v", got.Setup, setup)
	}

	to := *setup.Clone()
	to.RunnerCmd, to.Skills = "/opt/agent2", []string{"/srv/skills2", "/srv/more"}
	evs, err = engine.ChangeSetup(r.run, to, "bob", c.now())
	if err != nil {
		t.Fatal(err)
	}
	r.commit(evs, nil, nil, "")
	loadEquals(t, db, r, "after a setup change")
	j, err := db.Journal(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	last := j[len(j)-1]
	want := []engine.SetupChange{
		{Field: "runner-cmd", From: "/opt/agent", To: "/opt/agent2"},
		{Field: "skills", From: "/srv/skills", To: "/srv/skills2 /srv/more"},
	}
	if last.Type != engine.EvSetupChanged || last.Actor != "bob" || !reflect.DeepEqual(last.Changes, want) {
		t.Fatalf("last event = %s by %q %+v, want setup-changed by bob %+v", last.Type, last.Actor, last.Changes, want)
	}
	rebuilt, err := rebuild(ctx, db, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rebuilt.Setup, &to) {
		t.Fatalf("journal rebuilds setup %+v, want %+v", rebuilt.Setup, to)
	}
	// Nothing changes: nothing is journaled.
	if evs, err := engine.ChangeSetup(rebuilt, to, "bob", c.now()); err != nil || evs != nil {
		t.Fatalf("unchanged setup: %v, %v", evs, err)
	}
}

// A run as a gonogo from before setups were kept wrote it: its snapshot and
// run-started event have no setup.
const (
	oldRunID    = "20250314-092653-a1b2c3d4e5f6"
	oldSnapshot = `{"v":1,"id":"20250314-092653-a1b2c3d4e5f6","state":"running","input":"chain","mode":"checkpointed",` +
		`"steps":[{"n":1,"from_plan":true,"depends_on":null,"status":"pending","attempts":null,"decisions":null}],` +
		`"started_by":"ann","created":"2025-03-14T09:26:53Z","updated":"2025-03-14T09:26:53Z","seq":1}`
	oldPlan = `{"v":1,"input":"chain","source":"deliver-prd","args":null,` +
		`"steps":[{"skill":"deliver-prd","p_tokens":null,"prompt":"Write it.","depends_on":null}],` +
		`"manual":null,"deferred":null,"warnings":null}`
	oldStarted = `{"v":1,"seq":1,"time":"2025-03-14T09:26:53Z","type":"run-started","actor":"ann",` +
		`"start":{"id":"20250314-092653-a1b2c3d4e5f6","plan_stored":true,"mode":"checkpointed","quorum":1,"started_by":"ann"}}`
	oldSummary = `{"v":1,"state":"running","input":"chain","source":"deliver-prd","created":"2025-03-14T09:26:53Z",` +
		`"updated":"2025-03-14T09:26:53Z","steps_total":1,"steps_done":0}`
)

func TestRunRecordedWithoutSetupStillReads(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rawUpdate(t, dir, func(tx *bbolt.Tx) error {
		id := []byte(oldRunID)
		j, err := tx.Bucket(bucketJournal).CreateBucket(id)
		if err != nil {
			return err
		}
		for _, put := range []error{
			tx.Bucket(bucketRuns).Put(id, []byte(oldSnapshot)),
			tx.Bucket(bucketPlans).Put(id, []byte(oldPlan)),
			tx.Bucket(bucketRuns).Put(summaryKey(id), []byte(oldSummary)),
			tx.Bucket(bucketActive).Put(id, nil),
			j.Put(seqKey(1), []byte(oldStarted)),
		} {
			if put != nil {
				return put
			}
		}
		return nil
	})
	db = openStore(t, dir, Options{})
	r, err := db.Load(ctx, oldRunID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Setup != nil || r.Steps[0].Skill != "deliver-prd" {
		t.Fatalf("old run reads as setup %+v, step %q", r.Setup, r.Steps[0].Skill)
	}
	// Nor did it record its approvers and deadlines: the engine judges it
	// by the front end's approvers (engine.ApproversOf).
	if r.Oversight != nil {
		t.Fatalf("old run reads with oversight %+v", r.Oversight)
	}
	rebuilt, err := rebuild(ctx, db, oldRunID)
	if err != nil {
		t.Fatal(err)
	}
	if rebuilt.Setup != nil || rebuilt.Oversight != nil {
		t.Fatalf("old journal rebuilds a setup %+v, oversight %+v", rebuilt.Setup, rebuilt.Oversight)
	}
	// Resuming it records the setup it goes on with, every field new.
	evs, err := engine.ChangeSetup(r, engine.Setup{Runner: "claude", Skills: []string{"skills"}}, "ann", newClock().now())
	if err != nil {
		t.Fatal(err)
	}
	rr := &runner{t: t, db: db, clock: newClock(), run: r}
	rr.commit(evs, nil, nil, "")
	got, err := db.Load(ctx, oldRunID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Setup == nil || got.Setup.Runner != "claude" || len(evs[0].Changes) != 2 || evs[0].Changes[0].From != "" {
		t.Fatalf("setup after the change = %+v, changes %+v", got.Setup, evs[0].Changes)
	}
}
