package terminal

import (
	"context"
	"fmt"
	"io"

	"github.com/gonogo/gonogo/engine"
)

// SetupRecorder journals that a run goes on with another setup.
type SetupRecorder interface {
	ChangeSetup(ctx context.Context, id engine.RunID, to engine.Setup, actor string) (*engine.Run, error)
}

// RecordSetup journals how run r goes on (setup) when it differs from
// what was recorded, and says so on w; a nil setup records nothing.
func RecordSetup(ctx context.Context, w io.Writer, svc SetupRecorder, r *engine.Run, setup *engine.Setup, who string) error {
	if setup == nil {
		return nil
	}
	changes := engine.DiffSetup(r.Setup, setup)
	if len(changes) == 0 {
		return nil
	}
	if _, err := svc.ChangeSetup(ctx, r.ID, *setup, who); err != nil {
		return err
	}
	for _, c := range changes {
		fmt.Fprintf(w, "Setup changed by %s: %s\n", who, c)
	}
	return nil
}

// ResumeMode is the mode resume --auto (auto) or --force-auto (force)
// asks for; "" keeps the run's. The engine's warning is said on w.
func ResumeMode(w io.Writer, r *engine.Run, auto, force bool) engine.Mode {
	if !auto && !force {
		return ""
	}
	p := r.Plan
	p.Flags.Auto, p.Flags.ForceAuto = true, force
	mode, warn := engine.ResolveMode(p)
	if warn != "" {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	return mode
}
