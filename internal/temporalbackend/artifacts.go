package temporalbackend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/gonogo/gonogo/engine"
)

// ArtifactStore keeps artifact bodies out of workflow history, which
// holds only their keys: an artifact may be a megabyte, a history event
// should stay small. It is shared by every worker and client (a shared
// directory, or S3; see storage/artifacts).
type ArtifactStore interface {
	// Put stores body under key. Keys are immutable: putting the same
	// body again is no error (an activity that is retried puts again).
	Put(ctx context.Context, key string, body []byte) error
	// Get returns the body stored under key, or an error wrapping
	// engine.ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
}

// agentKey is where the agent's output of one attempt is kept: the name
// bbolt's data directory gives an earlier attempt, which never changes
// once written.
func agentKey(id engine.RunID, st *engine.Step, attempt int) string {
	return engine.ArtifactFile(id, st.N, st.Skill, attempt, false)
}

// editKey is where a person's replacement of an attempt's artifact is
// kept: named by its content, so that a repeated edit puts the same key
// and two different edits never overwrite each other.
func editKey(id engine.RunID, st *engine.Step, attempt int, body []byte) string {
	sum := sha256.Sum256(body)
	base := strings.TrimSuffix(agentKey(id, st, attempt), ".md")
	return fmt.Sprintf("%s.edit-%s.md", base, hex.EncodeToString(sum[:8]))
}

// refKey names an attempt in the workflow's map of current artifact keys.
func refKey(step, attempt int) string { return fmt.Sprintf("%d/%d", step, attempt) }

// ArtifactVersions returns an attempt's versions as the audit trail reads
// them (engine/audit): the agent's original first, when it made one, then
// each person's edit in order. A run's workflow keeps every edit's body
// in the store but names only the current one, so an attempt edited once
// has all its versions, and one edited more than once has the original
// only: the trail then lists each of those edits, with who and when, as
// not in the store rather than guess which body was whose.
func (b *Backend) ArtifactVersions(ctx context.Context, id engine.RunID, step, attempt int) ([][]byte, error) {
	r, err := b.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	st := r.Step(step)
	if st == nil {
		return nil, fmt.Errorf("run %s has no step %d: %w", id, step, engine.ErrNotFound)
	}
	cur, err := b.Artifact(ctx, id, step, attempt)
	if err != nil {
		return nil, err
	}
	edits := 0
	for _, d := range st.Decisions {
		if d.Attempt == attempt && d.Kind == engine.DecideEdit {
			edits++
		}
	}
	if edits == 0 {
		return [][]byte{cur}, nil
	}
	var out [][]byte
	orig, err := b.cfg.Artifacts.Get(ctx, agentKey(id, st, attempt))
	switch {
	case err == nil:
		out = append(out, orig)
	case !errors.Is(err, engine.ErrNotFound):
		return nil, err
	}
	if edits == 1 {
		out = append(out, cur)
	}
	return out, nil
}
