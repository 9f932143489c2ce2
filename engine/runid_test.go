package engine

import (
	"strings"
	"testing"
)

func TestRunIDWellFormed(t *testing.T) {
	for id, want := range map[RunID]bool{
		NewRunID(t0):                             true,
		"20260302-140000-a1b2c3d4":               true,
		"20260302-140000-":                       false,
		"20260302-140000-A1B2":                   false,
		"20260302-140000-a1b2/../x":              false,
		"2026030-2140000-a1b2":                   false,
		"2026030x-140000-a1b2":                   false,
		"..":                                     false,
		"":                                       false,
		"run-a":                                  false,
		"20260302-140000-a1b2\n":                 false,
		RunID("20260302-140000-" + hex33()):      false,
		RunID("20260302-140000-" + hex33()[:32]): true,
	} {
		if got := id.WellFormed(); got != want {
			t.Errorf("%q.WellFormed() = %v, want %v", id, got, want)
		}
	}
}

func hex33() string { return strings.Repeat("abc", 11) }
