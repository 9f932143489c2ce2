package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	settings "github.com/gonogo/gonogo/internal/config"
	"github.com/gonogo/gonogo/internal/temporalbackend"
	"github.com/gonogo/gonogo/internal/terminal"
)

// dialTemporal connects to the cluster tc names, logging through log.
func dialTemporal(ctx context.Context, tc settings.Temporal, log *slog.Logger) (client.Client, error) {
	return temporalbackend.Dial(ctx, temporalbackend.DialOptions{Addr: tc.Addr, Namespace: tc.Namespace,
		TLSCert: tc.TLSCert, TLSKey: tc.TLSKey, TLSCA: tc.TLSCA, TLSServerName: tc.TLSServerName}, log)
}

// quietLogger keeps the SDK's own chatter to warnings and errors.
func quietLogger(e env) *slog.Logger {
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func newTemporalCmd(a *cli) *cobra.Command {
	c := &cobra.Command{
		Use:   "temporal",
		Short: "Temporal mode: prepare the cluster gonogo runs on",
		Long: `Temporal mode: commands for the Temporal cluster named by GONOGO_TEMPORAL_ADDR
(see the README's "Scale out").`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return usagef("temporal needs a command: setup")
		},
	}
	c.AddCommand(newTemporalSetupCmd(a))
	return c
}

func newTemporalSetupCmd(a *cli) *cobra.Command {
	var retention time.Duration
	c := &cobra.Command{
		Use:   "setup [flags]",
		Short: "Create gonogo's namespace and search attributes (safe to repeat)",
		Long: `Make the Temporal cluster at GONOGO_TEMPORAL_ADDR ready for gonogo: register the
namespace GONOGO_TEMPORAL_NAMESPACE (default gonogo) when it is missing, keeping finished
runs for --retention, and add the search attributes gonogo lists runs by (GonogoState,
GonogoStarter, GonogoChannel, all Keyword). Running it again changes nothing.

Exit codes: 0 ready, 2 no cluster configured, unreachable or refused.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			a.code = cmdTemporalSetup(c.Context(), a.e, retention)
			return nil
		},
	}
	c.Flags().DurationVar(&retention, "retention", temporalbackend.DefaultRetention, "how long a new namespace keeps a finished run's history")
	return c
}

func cmdTemporalSetup(ctx context.Context, e env, retention time.Duration) int {
	tc, err := settings.LoadTemporal(ctx, e.lookup)
	if err != nil {
		return fail(e, "temporal setup", err)
	}
	if retention < 24*time.Hour {
		return fail(e, "temporal setup", usagef("--retention %v: Temporal keeps a namespace's history for a day at least", retention))
	}
	c, err := dialTemporal(ctx, tc, quietLogger(e))
	if err != nil {
		return fail(e, "temporal setup", err)
	}
	defer c.Close()
	rep, err := temporalbackend.Setup(ctx, c, tc.Namespace, retention)
	if err != nil {
		return fail(e, "temporal setup", err)
	}
	rep.Print(e.stdout, tc.Addr, retention)
	return terminal.ExitOK
}
