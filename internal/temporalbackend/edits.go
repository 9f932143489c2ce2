package temporalbackend

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/gonogo/gonogo/engine"
)

// A person's edit replaces an attempt's current artifact, but the audit
// trail shows every version, as bbolt keeps them: the agent's original,
// then each edit in order. The workflow names the current key of each
// attempt (keys) and, apart, the key of every edit (edits), so that no
// version is ever guessed from the current one.

// keepEdit records that an edit of step's attempt was kept under key:
// the attempt's current artifact, and its newest version.
func (f *flow) keepEdit(step, attempt int, key string) {
	ref := refKey(step, attempt)
	f.keys[ref] = key
	if f.edits == nil {
		f.edits = map[string][]string{}
	}
	f.edits[ref] = append(f.edits[ref], key)
}

// cloneEdits copies an edits map deeply: a query's answer or a new
// workflow's input must not share slices with the running workflow.
func cloneEdits(m map[string][]string) map[string][]string {
	if len(m) == 0 {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = slices.Clone(v)
	}
	return out
}

// editKeys are the store keys of the edits of st's attempt, in the order
// they were recorded, as the run's view names them. A run whose workflow
// continued as new under a release that kept only the current key names
// no key for the edits recorded before: then an attempt edited once has
// its edit as its current artifact, and one edited more often has only
// the edits the view names when they are all of them, else none (the
// audit trail lists the others as not in the store, with who and when,
// rather than pair a body with the wrong edit).
func editKeys(v reading, st *engine.Step, attempt int) (keys []string, edited bool) {
	n := 0
	for _, d := range st.Decisions {
		if d.Attempt == attempt && d.Kind == engine.DecideEdit {
			n++
		}
	}
	ref := refKey(st.N, attempt)
	known := v.edits[ref]
	switch {
	case n == 0:
		return nil, false
	case len(known) == n:
		return slices.Clone(known), true
	case n == 1 && v.keys[ref] != "":
		return []string{v.keys[ref]}, true
	}
	return nil, true
}

// ArtifactVersions returns an attempt's versions as the audit trail reads
// them (engine/audit), as engine.History says: the agent's original
// first, when it made one, then each person's edit in order.
func (b *Backend) ArtifactVersions(ctx context.Context, id engine.RunID, step, attempt int) ([][]byte, error) {
	v, err := b.read(ctx, id)
	if err != nil {
		return nil, err
	}
	st := v.run.Step(step)
	if st == nil {
		return nil, fmt.Errorf("run %s has no step %d: %w", id, step, engine.ErrNotFound)
	}
	cur, ok := v.keys[refKey(step, attempt)]
	if !ok {
		return nil, fmt.Errorf("run %s step %d attempt %d has no artifact: %w", id, step, attempt, engine.ErrNotFound)
	}
	edits, edited := editKeys(v, st, attempt)
	if !edited {
		body, err := b.cfg.Artifacts.Get(ctx, cur)
		if err != nil {
			return nil, err
		}
		return [][]byte{body}, nil
	}
	// An edited attempt's original is under the agent's key, when the
	// agent kept one (an EMPTY attempt's edit is its first version).
	var out [][]byte
	orig, err := b.cfg.Artifacts.Get(ctx, agentKey(id, st, attempt))
	switch {
	case err == nil:
		out = append(out, orig)
	case !errors.Is(err, engine.ErrNotFound):
		return nil, err
	}
	for _, key := range edits {
		body, err := b.cfg.Artifacts.Get(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("run %s step %d attempt %d: an edit's version: %w", id, step, attempt, err)
		}
		out = append(out, body)
	}
	return out, nil
}
