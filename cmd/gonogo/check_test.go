package main

import (
	"strings"
	"testing"

	"github.com/gonogo/gonogo/internal/terminal"
)

// check refuses a runner name that run would refuse, as a usage error.
func TestCheckRefusesAnUnknownRunner(t *testing.T) {
	for _, args := range [][]string{
		{"check", "--runner", "clade", "--chain", "deliver-prd -- x"},
		{"run", "--runner", "clade", "--chain", "deliver-prd -- x"},
	} {
		res := gonogo(t, baseVars(t), "", args...)
		if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, `unknown runner "clade"`) {
			t.Errorf("gonogo %s: exit %d, stderr %q; want %d naming the runner", args[0], res.code, res.stderr, terminal.ExitUsage)
		}
	}
}
