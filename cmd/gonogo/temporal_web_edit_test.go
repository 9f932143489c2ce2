//go:build temporal

package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/gonogo/gonogo/engine"
)

// TestTemporalWebEdit makes an edit where gonogo web's page sends its
// edits, on a cluster: the workflow takes it as an edit made in Slack,
// keeps the agent's text and the edit as the attempt's two versions, goes
// on from the edit, and the same form sent again applies nothing.
func TestTemporalWebEdit(t *testing.T) {
	agent := writeAgent(t, `cat >/dev/null
printf '# Output of %s\n\nSaved searches.\n' "$GONOGO_SKILL"
`)
	c := newCluster(t, agent, 3*time.Second)
	c.worker()
	vars := c.vars()
	id := c.startWith("define-problem-statement -> deliver-prd", false)
	c.waitStep(id, 1, engine.StepWaiting)

	e := env{stdout: io.Discard, stderr: io.Discard, lookup: envconfig.MapLookuper(vars),
		getenv: func(k string) string { return vars[k] }}
	text := editedText(20_000)
	edit := engine.Decision{Kind: engine.DecideEdit, Step: 1, Attempt: 1, Key: "web:edit-1", Actor: "reviewer"}
	for i, body := range []string{text, text + "\nagain"} {
		dc, err := webDeciders(e, vars["GONOGO_DATA_DIR"])(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		_, carried, err := dc.Decide(t.Context(), id, edit, []byte(body))
		if cerr := dc.Close(); cerr != nil || !carried || (i == 0 && err != nil) {
			t.Fatalf("edit %d: carried %v, %v; close: %v", i+1, carried, err, cerr)
		}
	}

	r := c.waitStep(id, 2, engine.StepWaiting)
	if a := r.Step(1).Latest(); !a.Edited || a.Size != len(text) || r.Step(1).LastDecision() == nil || r.Step(1).LastDecision().Kind != engine.DecideEdit {
		t.Fatalf("step 1 after the edit: decisions %+v, attempt %+v", r.Step(1).Decisions, a)
	}
	vs, err := c.b.ArtifactVersions(t.Context(), id, 1, 1)
	if err != nil || len(vs) != 2 || !strings.HasPrefix(string(vs[0]), "# Output of define-problem-statement") || string(vs[1]) != text {
		t.Fatalf("step 1 keeps %d versions, want the agent's then the edit (%v)", len(vs), err)
	}
	_, journal, err := c.b.RunWithJournal(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var edits []string
	for _, ev := range journal {
		if ev.Type == engine.EvDecision && ev.Decision == engine.DecideEdit {
			edits = append(edits, ev.Actor)
		}
	}
	if len(edits) != 1 || edits[0] != "reviewer" {
		t.Fatalf("edits journaled by %q, want one by reviewer", edits)
	}
}
