package storage

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

func TestArtifactSumsAreOfTheCurrentBodies(t *testing.T) {
	db := openStore(t, t.TempDir(), Options{})
	r := startRun(t, db, "r1", testPlan(2), newClock())
	r.start(1)
	r.finish(1, engine.ResultProduced, "# first\n\nthe agent's words\n")
	r.decide(1, engine.DecideRedo, "k1", "shorter", "")
	r.start(1)
	r.finish(1, engine.ResultProduced, "# second\n")
	r.decide(1, engine.DecideEdit, "k2", "", "# second, edited\n")
	r.start(2)
	r.finish(2, engine.ResultFailed, "")

	got, err := db.ArtifactSums(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	hash := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	want := []ArtifactSum{
		{Step: 1, Attempt: 1, Size: 27, SHA256: hash("# first\n\nthe agent's words\n")},
		{Step: 1, Attempt: 2, Size: 17, SHA256: hash("# second, edited\n")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("sums = %+v\nwant %+v", got, want)
	}
	if none, err := db.ArtifactSums(ctx, "nope"); !errors.Is(err, engine.ErrNotFound) || none != nil {
		t.Fatalf("unknown run: %v, %v; want ErrNotFound", none, err)
	}
}
