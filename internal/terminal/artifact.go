package terminal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gonogo/gonogo/engine"
)

// ArtifactReader is what gonogo show --artifact reads of a run.
type ArtifactReader interface {
	RunLoader
	Artifact(ctx context.Context, id engine.RunID, step, attempt int) ([]byte, error)
}

// ArtifactShow is one gonogo show RUN --artifact N [--attempt K].
type ArtifactShow struct {
	Data    string // the data directory, as given
	Run     engine.RunID
	Step    int
	Attempt int // 0: the step's current artifact
}

// Show prints the artifact of step n of a run to stdout, byte for byte:
// the step's current one (its latest attempt's, the edit if it was
// edited), or attempt k's, and returns the exit code. A run, step or
// attempt that does not exist is exit 2; one that exists and has no
// artifact is exit 1.
func (v ArtifactShow) Show(ctx context.Context, rd ArtifactReader, stdout, stderr io.Writer) int {
	code, err := v.show(ctx, rd, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "gonogo show: %v\n", err)
		return ExitUsage
	}
	return code
}

// show is Show, with what stops it for a run, step or attempt that does
// not exist (or for a failure to read or write) as an error.
func (v ArtifactShow) show(ctx context.Context, rd ArtifactReader, stdout, stderr io.Writer) (int, error) {
	r, err := rd.Load(ctx, v.Run)
	if errors.Is(err, engine.ErrNotFound) {
		return 0, fmt.Errorf("no run %s in %s (see gonogo runs)", v.Run, v.Data)
	}
	if err != nil {
		return 0, err
	}
	n := v.Step
	a, why, err := artifactAttempt(r, n, v.Attempt)
	if err != nil {
		return 0, err
	}
	if a == nil {
		fmt.Fprintf(stderr, "gonogo show: %s\n", why)
		return ExitRefused, nil
	}
	body, err := rd.Artifact(ctx, v.Run, n, a.N)
	if errors.Is(err, engine.ErrNotFound) {
		fmt.Fprintf(stderr, "gonogo show: step %d attempt %d of run %s has no artifact stored\n", n, a.N, v.Run)
		return ExitRefused, nil
	}
	if err != nil {
		return 0, err
	}
	if IsTerminal(stdout) {
		// On a terminal the artifact is read, not kept: its control
		// sequences are shown, never obeyed. Redirected, it is the bytes
		// as stored.
		body = []byte(engine.Printable(string(body)))
	}
	if _, err := stdout.Write(body); err != nil {
		return 0, err
	}
	return ExitOK, nil
}

// artifactAttempt finds the attempt whose artifact show --artifact n
// [--attempt k] prints. It returns an error for a step or attempt that does
// not exist, and a nil attempt with the reason for one without an artifact.
func artifactAttempt(r *engine.Run, n, k int) (*engine.Attempt, string, error) {
	s := r.Step(n)
	if s == nil {
		return nil, "", fmt.Errorf("run %s has no step %d (it has %d)", r.ID, n, len(r.Steps))
	}
	if k != 0 {
		return attemptArtifact(r, s, k)
	}
	return currentArtifact(s)
}

// attemptArtifact is attempt k of step s, for show --artifact N
// --attempt K (see artifactAttempt).
func attemptArtifact(r *engine.Run, s *engine.Step, k int) (*engine.Attempt, string, error) {
	a := AttemptOf(s, k)
	switch {
	case a == nil:
		return nil, "", fmt.Errorf("step %d of run %s has no attempt %d (it has %d)", s.N, r.ID, k, len(s.Attempts))
	case !a.Artifact:
		return nil, fmt.Sprintf("step %d attempt %d has no artifact (%s)%s", s.N, k, OrDash(string(a.Result)), attemptsWithArtifact(s)), nil
	}
	return a, "", nil
}

// currentArtifact is the attempt whose artifact is step s's current one,
// for show --artifact N (see artifactAttempt).
func currentArtifact(s *engine.Step) (*engine.Attempt, string, error) {
	n, with := s.N, attemptsWithArtifact(s)
	l := s.Latest()
	switch {
	case l == nil:
		return nil, fmt.Sprintf("step %d has not run (%s): no artifact", n, s.Status), nil
	case s.Status == engine.StepSkipped:
		return nil, fmt.Sprintf("step %d was skipped: it has no current artifact%s", n, with), nil
	case !l.Artifact:
		return nil, fmt.Sprintf("step %d attempt %d has no artifact (%s)%s", n, l.N, OrDash(string(l.Result)), with), nil
	}
	return l, "", nil
}

// attemptsWithArtifact names the attempts of s that have an artifact, for
// a message about one that has none.
func attemptsWithArtifact(s *engine.Step) string {
	var ks []string
	for _, a := range s.Attempts {
		if a.Artifact {
			ks = append(ks, fmt.Sprintf("--attempt %d", a.N))
		}
	}
	if len(ks) == 0 {
		return ""
	}
	return "; stored: " + strings.Join(ks, ", ")
}
