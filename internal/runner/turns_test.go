package runner

import (
	"os"
	"path/filepath"
	"testing"
)

// The live turn count must end where the agent's own result says it did:
// every real capture is fed through the stream reader line by line, as the
// claude runner reads it, and the turns counted are compared with the
// result's num_turns.
func TestTurnsAgreeWithNumTurnsOnEveryCapture(t *testing.T) {
	t.Parallel()
	dir := filepath.Dir(corpus(t, "SOURCE.txt"))
	captures, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(captures) == 0 {
		t.Skip("no stream captures in the corpus")
	}
	for _, path := range captures {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var st stream
			unreported := 0 // new turns add did not report at once
			if err := readLines(f, DefaultMaxOutput, func(line []byte) {
				before := st.turns
				if urgent := st.add(line); st.turns > before && !urgent {
					unreported++
				}
			}); err != nil {
				t.Fatal(err)
			}
			if st.result == nil {
				t.Fatal("the capture has no result event")
			}
			if st.turns != st.result.NumTurns {
				t.Errorf("counted %d turns, the result says num_turns %d", st.turns, st.result.NumTurns)
			}
			if unreported > 0 {
				t.Errorf("%d of %d new turns were not reported at once", unreported, st.turns)
			}
		})
	}
}

func TestCountsEveryEvent(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{
		"2.0.25": true, "1.0.128": true, "2.1.7": false, "2.1.3": false, "2.10.0": false, "3.0.0": false,
		"": false, "next": false, "2": false,
	} {
		if got := countsEveryEvent(v); got != want {
			t.Errorf("countsEveryEvent(%q) = %v, want %v", v, got, want)
		}
	}
}
