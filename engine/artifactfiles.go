package engine

// ArtifactPlace is one artifact file of a run under the data directory:
// Path (as Attempt.File) holds the current artifact of the step's
// attempt, a person's last edit, else the agent's output. Edits counts the
// attempt's edits, so that a copy of the files can tell that the body
// changed though the path did not.
type ArtifactPlace struct {
	Path          string
	Step, Attempt int
	Edits         int
}

// ArtifactPlaces are the artifact files run r has under the data
// directory, in step and attempt order: one for each attempt that kept an
// artifact and has a file name (a run of one step has none). The bbolt
// store writes them as its commits land and again, from its own bytes,
// after a crash; a front end that follows a run kept elsewhere (on a
// Temporal cluster) writes them as the run's changes reach it
// (FileChanges).
func ArtifactPlaces(r *Run) []ArtifactPlace {
	var out []ArtifactPlace
	for i := range r.Steps {
		s := &r.Steps[i]
		for j := range s.Attempts {
			a := &s.Attempts[j]
			if a.File == "" || !a.Artifact {
				continue
			}
			out = append(out, ArtifactPlace{Path: a.File, Step: s.N, Attempt: a.N, Edits: editsOf(s, a.N)})
		}
	}
	return out
}

// editsOf counts the edits of attempt n of s.
func editsOf(s *Step, n int) int {
	k := 0
	for _, d := range s.Decisions {
		if d.Attempt == n && d.Kind == DecideEdit {
			k++
		}
	}
	return k
}

// FileChanges is what turns the artifact files of a run as before stood
// into those of the run as after stands, as the bbolt store's commits
// would have changed them: the places to write (new ones, those that now
// hold another attempt, and those whose attempt was edited since), and the
// paths no attempt has any more, to remove (the step's artifact file of a
// step since skipped, which the store renames to its attempt's name).
// before nil is a run of which nothing was written: every place is.
func FileChanges(before, after *Run) (write []ArtifactPlace, remove []string) {
	had := map[string]ArtifactPlace{}
	if before != nil {
		for _, p := range ArtifactPlaces(before) {
			had[p.Path] = p
		}
	}
	for _, p := range ArtifactPlaces(after) {
		if old, ok := had[p.Path]; !ok || old != p {
			write = append(write, p)
		}
		delete(had, p.Path)
	}
	if before != nil {
		for _, p := range ArtifactPlaces(before) {
			if _, gone := had[p.Path]; gone {
				remove = append(remove, p.Path)
			}
		}
	}
	return write, remove
}
