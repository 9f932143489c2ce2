package storage

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// Storing an artifact copies it once, into bbolt's page, even in a fresh
// store whose file grows several times over to take it: the file grows
// inside bbolt's map, which mapping it anew would copy every value the
// transaction holds (the artifact among them) onto the heap to do.
func TestStoringAnArtifactCopiesItOnce(t *testing.T) {
	const size = 8 << 20
	db := openStore(t, t.TempDir(), Options{NoSync: true})
	r := startRun(t, db, "r-mem", testPlan(2), newClock())
	r.start(1)
	body := bytes.Repeat([]byte("The address form keeps what the customer typed.\n"), size/48)
	a := r.run.Step(1).Latest().N
	f := engine.Finished{Result: engine.ResultProduced, Artifact: true, Size: len(body),
		File: engine.ArtifactFile(r.run.ID, 1, r.run.Step(1).Skill, a, true)}
	evs, err := engine.Finish(r.run, 1, a, f, r.clock.now())
	if err != nil {
		t.Fatal(err)
	}
	arts := []engine.ArtifactWrite{{Step: 1, Attempt: a, Body: body}}
	files := []engine.FileWrite{{Path: f.File, Body: body}}

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r.commit(evs, arts, files, "")
	runtime.ReadMemStats(&after)
	if got := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(body)); got > 1.1 {
		t.Errorf("storing a %d-byte artifact in a fresh store allocated %.2f bytes per byte of it, want about 1 (its page)", len(body), got)
	}
	if got, err := db.Artifact(t.Context(), r.run.ID, 1, a); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("the artifact read back: %d bytes, %v; want the %d stored", len(got), err, len(body))
	}
}
