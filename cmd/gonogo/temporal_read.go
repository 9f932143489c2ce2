package main

import (
	"context"
	"fmt"

	"github.com/gonogo/gonogo/engine"
	settings "github.com/gonogo/gonogo/internal/config"
	"github.com/gonogo/gonogo/internal/temporalbackend"
	"github.com/gonogo/gonogo/storage"
)

// clusterReader is the runReader of a Temporal cluster
// (temporalbackend.Reader), with its artifact sums as storage's.
type clusterReader struct{ *temporalbackend.Reader }

// openCluster is the runReader of the cluster GONOGO_TEMPORAL_ADDR names;
// ok is false when it names none.
func openCluster(ctx context.Context, e env, data string) (r runReader, ok bool, err error) {
	tc, err := settings.LoadTemporal(ctx, e.lookup)
	if err != nil || tc.Addr == "" {
		return nil, false, err
	}
	cfg, err := loadConfig(ctx, e.lookup)
	if err != nil {
		return nil, true, err
	}
	b, c, err := temporalBackend(ctx, e, cfg, tc, data)
	if err != nil {
		return nil, true, err
	}
	return clusterReader{temporalbackend.NewReader(b, c, fmt.Sprintf("on Temporal at %s, namespace %s", tc.Addr, tc.Namespace))}, true, nil
}

// ArtifactSums sums each attempt's current artifact on the cluster.
func (r clusterReader) ArtifactSums(ctx context.Context, id engine.RunID) ([]storage.ArtifactSum, error) {
	sums, err := r.Reader.ArtifactSums(ctx, id)
	out := make([]storage.ArtifactSum, 0, len(sums))
	for _, s := range sums {
		out = append(out, storage.ArtifactSum(s))
	}
	return out, err
}
