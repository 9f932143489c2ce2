package temporalbackend

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Print says on w, a line each, what Setup found and did on the cluster at
// addr, for gonogo temporal setup; retention is what a namespace it
// created keeps.
func (rep SetupReport) Print(w io.Writer, addr string, retention time.Duration) {
	if rep.CreatedNamespace {
		fmt.Fprintf(w, "namespace %s: created (finished runs kept %s)\n", rep.Namespace, days(retention))
	} else {
		fmt.Fprintf(w, "namespace %s: already there\n", rep.Namespace)
	}
	if len(rep.AddedAttributes) > 0 {
		fmt.Fprintf(w, "search attributes: added %s\n", strings.Join(rep.AddedAttributes, ", "))
	} else {
		fmt.Fprintln(w, "search attributes: all there")
	}
	fmt.Fprintf(w, "a run using them: accepted (waited %s for the cluster to take them up)\n", rep.Waited.Round(100*time.Millisecond))
	fmt.Fprintf(w, "Temporal at %s is ready for gonogo.\n", addr)
}

// days says a retention in days when it is whole days.
func days(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		if n := d / (24 * time.Hour); n != 1 {
			return fmt.Sprintf("%d days", n)
		}
		return "1 day"
	}
	return d.String()
}
