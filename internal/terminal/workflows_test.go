package terminal

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// TestPrintWorkflowsSaysWhatEachHolds: a workflow that reads shows its
// steps and description on one line; one that does not points at check;
// an empty folder is named.
func TestPrintWorkflowsSaysWhatEachHolds(t *testing.T) {
	read := func(name string) (engine.WorkflowSpec, error) {
		if name == "broken" {
			return engine.WorkflowSpec{}, errors.New("line 3: not YAML")
		}
		return engine.WorkflowSpec{Name: name, Description: "Ship it:\n  PRD, then stories.", Steps: make([]engine.WorkflowStep, 2)}, nil
	}
	var b bytes.Buffer
	PrintWorkflows(&b, "wf", []string{"broken", "kickoff"}, read)
	want := "broken                       (does not read: gonogo check --workflow broken)\n" +
		"kickoff                      2 steps  Ship it: PRD, then stories.\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	PrintWorkflows(&b, "wf", nil, read)
	if strings.TrimSpace(b.String()) != "No workflows in wf" {
		t.Errorf("empty: %q", b.String())
	}
}
