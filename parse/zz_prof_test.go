package parse_test

import (
	"testing"

	"github.com/gonogo/gonogo/parse"
)

func BenchmarkZZPlanOnly(b *testing.B) {
	src := benchPlan(2 << 20)
	opt := parse.PlanOptions{MaxBytes: 4 << 20}
	for b.Loop() {
		parse.Plan(src, "bench.md", opt)
	}
}
