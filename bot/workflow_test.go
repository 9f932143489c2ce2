package bot

import (
	"testing"
)

// The name a saved chain is offered: its skills' words once each, short
// enough to number, and free.
func TestWorkflowNameFor(t *testing.T) {
	taken := map[string]bool{"deliver-prd": true, "deliver-prd-2": true}
	long := []string{"discover-interview-synthesis", "define-problem-statement", "deliver-prd", "deliver-user-stories", "measure-experiment-design"}
	tests := []struct {
		skills []string
		want   string
	}{
		{[]string{"deliver-prd", "deliver-user-stories"}, "deliver-prd-user-stories"},
		{[]string{"deliver-prd"}, "deliver-prd-3"},
		{[]string{"deliver-prd", "deliver-prd"}, "deliver-prd-3"},
		{long, "discover-interview-synthesis-define-problem-statement"},
		{nil, "saved-chain"},
	}
	for _, tt := range tests {
		got := workflowNameFor(tt.skills, func(n string) bool { return taken[n] })
		if got != tt.want {
			t.Errorf("workflowNameFor(%v) = %q, want %q", tt.skills, got, tt.want)
		}
		if err := CheckWorkflowName(got); err != nil {
			t.Errorf("workflowNameFor(%v) = %q, which cannot be saved: %v", tt.skills, got, err)
		}
	}
}
