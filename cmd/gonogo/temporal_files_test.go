//go:build temporal

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine/audit"
	"github.com/gonogo/gonogo/internal/terminal"
)

// gonogo run and resume on Temporal write the run's artifact files under
// the data directory of the machine they follow it on, as a run on bbolt
// has them, and say where; export lists every version of an edited
// artifact, with the same sums, sizes and diffs as the same run's export
// on bbolt.
func TestTemporalRunWritesItsFilesAndExportsEveryVersion(t *testing.T) {
	agent := writeAgent(t, `cat >/dev/null
printf '# %s\n\nWritten by the agent for step %s.\n' "$GONOGO_SKILL" "$GONOGO_STEP"
`)
	const chain = "deliver-prd -> define-problem-statement -- saved searches"
	edited := "# PRD, as the team wrote it\n\nShorter, and ours.\n"
	editFile := filepath.Join(t.TempDir(), "edit.md")
	if err := os.WriteFile(editFile, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	agentsOwn := func(skill string, step int) string {
		return "# " + skill + "\n\nWritten by the agent for step " + string(rune('0'+step)) + ".\n"
	}
	c := newCluster(t, agent, 3*time.Second)
	c.worker()
	vars := c.vars()

	// Started here and left waiting at step 1: its file is written.
	first := gonogo(t, vars, "", "run", "--chain", chain)
	if first.code != terminal.ExitWaiting {
		t.Fatalf("run: exit %d\n%s%s", first.code, first.stdout, first.stderr)
	}
	id := strings.Fields(first.stdout)[2] // "gonogo run ID"
	data := vars["GONOGO_DATA_DIR"]
	step1 := filepath.Join(data, "runs", id, "01-deliver-prd.md")
	hasFile(t, step1, agentsOwn("deliver-prd", 1))
	if !strings.Contains(first.stdout, "Artifact: "+step1) {
		t.Errorf("run does not say where step 1's artifact is:\n%s", first.stdout)
	}

	// Followed again from another machine (another data directory): the
	// files the run has so far are written there first, then those its
	// edit and its next step change.
	other := t.TempDir()
	vars["GONOGO_DATA_DIR"] = other
	res := gonogo(t, vars, "edit "+editFile+"\napprove\n", "resume", id)
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Run complete") {
		t.Fatalf("resume: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	hasFile(t, filepath.Join(other, "runs", id, "01-deliver-prd.md"), edited)
	step2 := filepath.Join(other, "runs", id, "02-define-problem-statement.md")
	hasFile(t, step2, agentsOwn("define-problem-statement", 2))
	if !strings.Contains(res.stdout, step2) {
		t.Errorf("resume does not say where step 2's artifact is:\n%s", res.stdout)
	}
	// The files of a run on the cluster are no runs of a lost store: a
	// run on bbolt still starts in that data directory.
	bbolt := map[string]string{"GONOGO_DATA_DIR": other, "GONOGO_SKILLS_DIR": vars["GONOGO_SKILLS_DIR"]}
	local := gonogo(t, bbolt, "edit "+editFile+"\napprove\n", "run", "--runner", "command", "--runner-cmd", agent, "--chain", chain)
	if local.code != terminal.ExitOK {
		t.Fatalf("the same run on bbolt, in the same data directory: exit %d\n%s%s", local.code, local.stdout, local.stderr)
	}
	localID := strings.Fields(local.stdout)[2]

	onCluster := exportJSON(t, vars, id)
	onBbolt := exportJSON(t, bbolt, localID)
	a := onCluster.Steps[0].Attempts[0]
	if a.Artifact == nil || a.Artifact.SHA256 != sum(agentsOwn("deliver-prd", 1)) || len(a.Edits) != 1 ||
		a.Edits[0].SHA256 != sum(edited) || a.Edits[0].Size != len(edited) || !strings.Contains(a.Edits[0].Diff, "+Shorter, and ours.") ||
		strings.Contains(a.Edits[0].Diff, "not in the store") {
		t.Errorf("step 1 on Temporal: artifact %+v edits %+v; want the agent's own and the edit", a.Artifact, a.Edits)
	}
	for i := range onBbolt.Steps {
		for j := range onBbolt.Steps[i].Attempts {
			want, got := versions(onBbolt.Steps[i].Attempts[j]), versions(onCluster.Steps[i].Attempts[j])
			if !reflect.DeepEqual(got, want) {
				t.Errorf("step %d attempt %d on Temporal: %+v; on bbolt: %+v", i+1, j+1, got, want)
			}
		}
	}
	md := gonogo(t, vars, "", "export", id, "--format", "md")
	if md.code != terminal.ExitOK || !strings.Contains(md.stdout, "sha256 `"+sum(edited)+"`") || !strings.Contains(md.stdout, "+Shorter, and ours.") {
		t.Errorf("export --format md: exit %d, lacks the edit's sum or diff\n%s%s", md.code, md.stdout, md.stderr)
	}
}

func hasFile(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Errorf("%s holds %q (%v), want %q", path, got, err, want)
	}
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func exportJSON(t *testing.T, vars map[string]string, id string) audit.Trail {
	t.Helper()
	res := gonogo(t, vars, "", "export", id, "--format", "json")
	var tr audit.Trail
	if res.code != terminal.ExitOK {
		t.Fatalf("export %s: exit %d\n%s", id, res.code, res.stderr)
	}
	if err := json.Unmarshal([]byte(res.stdout), &tr); err != nil {
		t.Fatal(err)
	}
	return tr
}

// artifactVersion is what an export says of one version of an attempt's artifact,
// without what differs between two runs (times, file names).
type artifactVersion struct {
	Actor, SHA256, Diff string
	Size                int
}

func versions(a audit.Attempt) []artifactVersion {
	var out []artifactVersion
	if a.Artifact != nil {
		out = append(out, artifactVersion{SHA256: a.Artifact.SHA256, Size: a.Artifact.Size})
	}
	for _, e := range a.Edits {
		out = append(out, artifactVersion{Actor: e.Actor, SHA256: e.SHA256, Size: e.Size, Diff: e.Diff})
	}
	return out
}
