package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sethvargo/go-envconfig"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/localapi"
)

// editedText is a reviewer's rewrite of an artifact, n characters long
// (not bytes: some are two bytes in UTF-8).
func editedText(n int) string {
	var b strings.Builder
	b.WriteString("# Problem statement, as the reviewer rewrote it\n\n")
	for i := 0; utf8.RuneCountInString(b.String()) < n; i++ {
		b.WriteString("- Café owners lose saved searches after an update; line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(".\n")
	}
	return string([]rune(b.String())[:n])
}

// TestLocalAPIEditWhileHeld edits a step of the run another gonogo holds,
// through the local API, from where gonogo web's page sends its edits: the holder takes the edit as
// one typed in its own terminal, under the editor's name, once per key,
// and goes on with the edited artifact; an edit over the holder's
// artifact limit is refused, naming the limit.
func TestLocalAPIEditWhileHeld(t *testing.T) {
	data := t.TempDir()
	prompts := t.TempDir()
	agent := writeAgent(t, `cat >"`+prompts+`/prompt-$GONOGO_STEP"
printf '# %s\n\nStep %s, made by the fake agent.\n' "$GONOGO_SKILL" "$GONOGO_STEP"`)
	holderEnv := append(os.Environ(), "GONOGO_TEST_AS_MAIN=1", "GONOGO_DATA_DIR="+data, "GONOGO_MAX_ARTIFACT=32KiB",
		"GONOGO_SKILLS_DIR="+filepath.Join(exampleDir(t), "skills"), "USER=holder")
	h := startHolder(t, holderEnv, "run", "--thread", "--runner", "command", "--runner-cmd", agent,
		"--chain", "define-problem-statement -> deliver-prd -- saved searches")
	id := engine.RunID(waitFor(t, h.out, regexp.MustCompile(`gonogo run (\S+)`), "the run id")[1])
	waitFor(t, h.out, regexp.MustCompile(`Step 1 of 2: define-problem-statement[\s\S]*Result:\s+PRODUCED`), "step 1's result")

	ctx := context.Background()
	c, err := localapi.Dial(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	edit := engine.Decision{Kind: engine.DecideEdit, Step: 1, Attempt: 1, Key: "web:edit-1", Actor: "reviewer"}

	// Over the holder's limit (32 KiB), not this process's: refused, the
	// limit named, nothing applied.
	big := []byte(editedText(40_000))
	if _, _, err := c.Edit(ctx, id, edit, big); err == nil ||
		!strings.Contains(err.Error(), "is "+strconv.Itoa(len(big))+" bytes, over the 32768-byte artifact limit (GONOGO_MAX_ARTIFACT)") {
		t.Fatalf("an edit over the limit: %v", err)
	}
	if r, err := c.Load(ctx, id); err != nil || r.Step(1).Status != engine.StepWaiting {
		t.Fatalf("after a refused edit step 1 is not waiting: %v", err)
	}

	// The edit goes where gonogo web sends its page's edits.
	text := editedText(20_000)
	e := env{stdout: io.Discard, stderr: io.Discard, lookup: envconfig.MapLookuper(map[string]string{}), getenv: func(string) string { return "" }}
	dc, err := webDeciders(e, data)(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, carried, err := dc.Decide(ctx, id, edit, []byte(text))
	if cerr := dc.Close(); err != nil || cerr != nil || !carried {
		t.Fatalf("edit: carried %v, %v; close: %v", carried, err, cerr)
	}
	if a := r.Step(1).Latest(); !a.Edited || a.Size != len(text) {
		t.Fatalf("step 1's attempt after the edit: %+v", a)
	}
	// The same form sent again applies nothing.
	if _, _, err := c.Edit(ctx, id, edit, []byte(text+"\nagain")); err == nil {
		t.Fatal("a second edit with the same key was taken")
	}
	waitFor(t, h.out, regexp.MustCompile(`Step 1 of 2: define-problem-statement: edit by reviewer`), "the holder to show the edit")
	waitFor(t, h.out, regexp.MustCompile(`Step 2 of 2: deliver-prd[\s\S]*Result:\s+PRODUCED`), "the holder to run step 2")

	checkEditedOnce(t, c, id, text)
	// Step 2 was given the edited artifact, not the agent's.
	prompt, err := os.ReadFile(filepath.Join(prompts, "prompt-2"))
	if err != nil || !strings.Contains(string(prompt), strings.TrimSpace(text)) || strings.Contains(string(prompt), "made by the fake agent") {
		t.Fatalf("step 2's prompt lacks the edited artifact (%v)", err)
	}

	approve := engine.Decision{Kind: engine.DecideApprove, Step: 2, Attempt: 1, Key: "web:approve-2", Actor: "reviewer"}
	if _, _, err := c.Decide(ctx, id, approve); err != nil {
		t.Fatal(err)
	}
	if err := h.wait(t); err != nil || !strings.Contains(h.out.String(), "Run complete: "+string(id)) {
		t.Fatalf("the holder ended with %v, not completing the run:\n%s", err, h.out.String())
	}
}

// checkEditedOnce checks, through the holder, that step 1's artifact is
// text, edited once, journaled under the reviewer.
func checkEditedOnce(t *testing.T, c *localapi.Client, id engine.RunID, text string) {
	t.Helper()
	ctx := context.Background()
	got, err := c.Artifact(ctx, id, 1, 1)
	if err != nil || string(got) != text {
		t.Fatalf("step 1's artifact is not the edit (%d bytes, %v)", len(got), err)
	}
	vs, err := c.ArtifactVersions(ctx, id, 1, 1)
	if err != nil || len(vs) != 2 {
		t.Fatalf("step 1 has %d versions, want the agent's and one edit: %v", len(vs), err)
	}
	_, journal, err := c.RunWithJournal(ctx, id)
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
