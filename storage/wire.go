package storage

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
)

// ArtifactSum is the current body of one attempt's artifact, in brief.
type ArtifactSum struct {
	Step    int
	Attempt int
	Size    int
	SHA256  string // hex
}

// ArtifactSums returns the size and sha256 of the current artifact (the
// last edit, else the agent's original) of every attempt of a run that has
// one, in step and attempt order; a run the store does not hold is
// ErrNotFound. The bodies are hashed where they lie: nothing a megabyte
// long is copied.
func (db *DB) ArtifactSums(ctx context.Context, id engine.RunID) ([]ArtifactSum, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	var out []ArtifactSum
	err := db.view(func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketRuns).Get([]byte(id)) == nil {
			return engine.ErrNotFound
		}
		b := tx.Bucket(bucketArtifacts).Bucket([]byte(id))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			if len(k) != 12 {
				return fmt.Errorf("artifact key of %d bytes: %w", len(k), ErrDamaged)
			}
			step, attempt := int(binary.BigEndian.Uint32(k)), int(binary.BigEndian.Uint32(k[4:]))
			sum := sha256.Sum256(v)
			s := ArtifactSum{Step: step, Attempt: attempt, Size: len(v), SHA256: hex.EncodeToString(sum[:])}
			// Versions of one attempt follow each other; the last is current.
			if n := len(out); n > 0 && out[n-1].Step == step && out[n-1].Attempt == attempt {
				out[n-1] = s
			} else {
				out = append(out, s)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("run %s artifacts: %w", id, err)
	}
	return out, nil
}
