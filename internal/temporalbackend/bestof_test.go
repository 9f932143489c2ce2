package temporalbackend

import (
	"errors"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// A best-of run is refused before the cluster is asked anything: the
// workflow would carry out one candidate and wait for the others forever.
func TestStartRefusesBestOf(t *testing.T) {
	p := engine.BestOf(engine.Plan{Input: engine.InputChain, Source: "deliver-prd",
		Steps: []engine.PlanStep{{Skill: "deliver-prd"}}}, []string{"claude", "codex"})
	r, err := (&Backend{}).Start(t.Context(), p, engine.StartOptions{StartedBy: "U1"})
	if r != nil || !errors.Is(err, ErrBestOf) || !errors.Is(err, engine.ErrBestOfUnsupported) {
		t.Fatalf("Start = %v, %v; want ErrBestOf", r, err)
	}
}
