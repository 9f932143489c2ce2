package temporalbackend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
