package engine_test

import (
	"reflect"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
)

// computeStats is engine.ComputeStats, checked to read nothing of the runs
// but what a StatsRunsReader gives (statstest.StatsFields): a store that
// decodes only those fields must get the same figures.
func computeStats(t *testing.T, runs []engine.StatsRun, q engine.StatsQuery) engine.Stats {
	t.Helper()
	got := engine.ComputeStats(runs, q)
	slim := make([]engine.StatsRun, len(runs))
	for i, sr := range runs {
		slim[i] = statstest.StatsFields(sr)
	}
	if s := engine.ComputeStats(slim, q); !reflect.DeepEqual(s, got) {
		t.Errorf("the stats read more than statstest.StatsFields keeps:\nof the runs %+v\nof what it keeps %+v", got, s)
	}
	return got
}
