package terminal

import (
	"fmt"
	"io"

	"github.com/gonogo/gonogo/engine"
)

// PrintWorkflows prints gonogo workflow list: each workflow of the
// workflows folder dir (names, as read lists them) with its number of
// steps and its description, or, when it does not read, how to see why.
func PrintWorkflows(w io.Writer, dir string, names []string, read func(name string) (engine.WorkflowSpec, error)) {
	if len(names) == 0 {
		fmt.Fprintf(w, "No workflows in %s\n", dir)
		return
	}
	for _, n := range names {
		spec, err := read(n)
		if err != nil {
			fmt.Fprintf(w, "%-28s (does not read: gonogo check --workflow %s)\n", n, n)
			continue
		}
		fmt.Fprintf(w, "%-28s %d steps  %s\n", n, len(spec.Steps), Clip(OneLine(spec.Description), 80))
	}
}
