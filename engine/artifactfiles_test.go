package engine

import (
	"reflect"
	"testing"
)

// The artifact files of a run, followed move by move, change as the bbolt
// store's commits change them: a new attempt's file is written, an
// earlier attempt's file moves to its attempt name, an edit rewrites the
// step's file, a skip moves it away; a follower that saw nothing writes
// every file.
func TestFileChanges(t *testing.T) {
	s := newScript(t, testPlan(InputChain, "deliver-prd", "deliver-user-stories"), StartOptions{StartedBy: "U-ana"})
	latest := func(n, a int) string { return ArtifactFile(s.r.ID, n, s.step(n).Skill, a, true) }
	named := func(n, a int) string { return ArtifactFile(s.r.ID, n, s.step(n).Skill, a, false) }
	moves := []struct {
		name   string
		move   func()
		write  []ArtifactPlace
		remove []string
	}{
		{"step 1 starts", func() { s.start(1) }, nil, nil},
		{"step 1 produces", func() { s.finish(1, ResultProduced) },
			[]ArtifactPlace{{Path: latest(1, 1), Step: 1, Attempt: 1}}, nil},
		{"a redo is asked", func() { s.decide(1, DecideRedo, "shorter") }, nil, nil},
		{"the redo runs", func() { s.start(1) }, nil, nil},
		{"the redo produces", func() { s.finish(1, ResultProduced) },
			[]ArtifactPlace{{Path: named(1, 1), Step: 1, Attempt: 1}, {Path: latest(1, 2), Step: 1, Attempt: 2}}, nil},
		{"a person edits it", func() { s.decide(1, DecideEdit, "") },
			[]ArtifactPlace{{Path: latest(1, 2), Step: 1, Attempt: 2, Edits: 1}}, nil},
		{"step 2 produces", func() { s.start(2); s.finish(2, ResultProduced) },
			[]ArtifactPlace{{Path: latest(2, 1), Step: 2, Attempt: 1}}, nil},
		{"step 2 is skipped", func() { s.decide(2, DecideSkip, "") },
			[]ArtifactPlace{{Path: named(2, 1), Step: 2, Attempt: 1}}, []string{latest(2, 1)}},
	}
	for _, m := range moves {
		before := s.r.Clone()
		m.move()
		write, remove := FileChanges(before, s.r)
		if !reflect.DeepEqual(write, m.write) || !reflect.DeepEqual(remove, m.remove) {
			t.Errorf("%s: write %+v remove %q, want write %+v remove %q", m.name, write, remove, m.write, m.remove)
		}
	}
	write, remove := FileChanges(nil, s.r)
	want := []ArtifactPlace{{Path: named(1, 1), Step: 1, Attempt: 1}, {Path: latest(1, 2), Step: 1, Attempt: 2, Edits: 1},
		{Path: named(2, 1), Step: 2, Attempt: 1}}
	if !reflect.DeepEqual(write, want) || remove != nil {
		t.Errorf("from nothing: write %+v remove %q, want every file %+v", write, remove, want)
	}
	if !reflect.DeepEqual(ArtifactPlaces(s.r), want) {
		t.Errorf("ArtifactPlaces = %+v, want %+v", ArtifactPlaces(s.r), want)
	}
}
