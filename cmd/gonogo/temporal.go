package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/gonogo/gonogo/internal/temporalbackend"
	"github.com/gonogo/gonogo/internal/terminal"
)

// temporalConfig is how gonogo reaches a Temporal cluster. Any of the TLS
// variables turns TLS on; a client certificate needs its key.
type temporalConfig struct {
	Addr          string `env:"GONOGO_TEMPORAL_ADDR" example:"temporal.internal:7233"`
	Namespace     string `env:"GONOGO_TEMPORAL_NAMESPACE, default=gonogo"`
	TLSCert       string `env:"GONOGO_TEMPORAL_TLS_CERT" example:"/etc/gonogo/client.pem"`
	TLSKey        string `env:"GONOGO_TEMPORAL_TLS_KEY" example:"/etc/gonogo/client.key"`
	TLSCA         string `env:"GONOGO_TEMPORAL_TLS_CA" example:"/etc/gonogo/ca.pem"`
	TLSServerName string `env:"GONOGO_TEMPORAL_TLS_SERVER_NAME"`
	// Heartbeat is how long the cluster trusts a silent step worker before
	// it records the step interrupted. It is fixed, for each run, by
	// whoever starts the run (run, serve), and read by nobody else.
	Heartbeat time.Duration `env:"GONOGO_TEMPORAL_HEARTBEAT, default=10s"`
	// MaxSteps is the cluster-wide limit on the steps that run at once,
	// fixed for each run, like Heartbeat, by whoever starts it; 0 is none.
	MaxSteps int `env:"GONOGO_TEMPORAL_MAX_STEPS, default=0"`
}

// minHeartbeat: a running step sends a heartbeat every second, so a
// shorter timeout would take a live worker for lost.
const minHeartbeat = 3 * time.Second

// errNoTemporal is the refusal of a Temporal command with no cluster named.
var errNoTemporal = errors.New("GONOGO_TEMPORAL_ADDR is not set: this command works on a Temporal cluster; set it to the cluster's frontend address (host:port, for example localhost:7233)")

func loadTemporalConfig(ctx context.Context, e env) (temporalConfig, error) {
	var tc temporalConfig
	if err := processEnv(ctx, &tc, e.lookup); err != nil {
		return tc, err
	}
	tc.Addr, tc.Namespace = strings.TrimSpace(tc.Addr), strings.TrimSpace(tc.Namespace)
	if tc.Namespace == "" {
		return tc, usagef("configuration: GONOGO_TEMPORAL_NAMESPACE is empty; leave it unset for the default, gonogo")
	}
	if tc.MaxSteps < 0 {
		return tc, usagef("configuration: GONOGO_TEMPORAL_MAX_STEPS is %d; it must be 0 (no limit) or more (for example GONOGO_TEMPORAL_MAX_STEPS=8)", tc.MaxSteps)
	}
	if tc.Heartbeat < minHeartbeat {
		return tc, usagef("configuration: GONOGO_TEMPORAL_HEARTBEAT is %s; it must be at least %s (a running step sends a heartbeat every second)", tc.Heartbeat, minHeartbeat)
	}
	return tc, nil
}

// tlsConfig is the TLS the variables ask for; nil when none is set.
func (tc temporalConfig) tlsConfig() (*tls.Config, error) {
	if tc.TLSCert == "" && tc.TLSKey == "" && tc.TLSCA == "" && tc.TLSServerName == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: tc.TLSServerName}
	switch {
	case (tc.TLSCert == "") != (tc.TLSKey == ""):
		return nil, usagef("configuration: GONOGO_TEMPORAL_TLS_CERT and GONOGO_TEMPORAL_TLS_KEY go together: set both (a client certificate and its key) or neither")
	case tc.TLSCert != "":
		pair, err := tls.LoadX509KeyPair(tc.TLSCert, tc.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("configuration: GONOGO_TEMPORAL_TLS_CERT=%q, GONOGO_TEMPORAL_TLS_KEY=%q: %w", tc.TLSCert, tc.TLSKey, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if tc.TLSCA != "" {
		pem, err := os.ReadFile(tc.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("configuration: GONOGO_TEMPORAL_TLS_CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usagef("configuration: GONOGO_TEMPORAL_TLS_CA=%q holds no PEM certificate", tc.TLSCA)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// dialTemporal connects to the cluster tc names, logging through log.
func dialTemporal(ctx context.Context, tc temporalConfig, log *slog.Logger) (client.Client, error) {
	if tc.Addr == "" {
		return nil, errNoTemporal
	}
	tlsCfg, err := tc.tlsConfig()
	if err != nil {
		return nil, err
	}
	c, err := client.DialContext(ctx, client.Options{
		HostPort:          tc.Addr,
		Namespace:         tc.Namespace,
		Logger:            tlog.NewStructuredLogger(log),
		ConnectionOptions: client.ConnectionOptions{TLS: tlsCfg},
	})
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at GONOGO_TEMPORAL_ADDR=%s: %w", tc.Addr, err)
	}
	return c, nil
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
	tc, err := loadTemporalConfig(ctx, e)
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
	if rep.CreatedNamespace {
		fmt.Fprintf(e.stdout, "namespace %s: created (finished runs kept %s)\n", rep.Namespace, days(retention))
	} else {
		fmt.Fprintf(e.stdout, "namespace %s: already there\n", rep.Namespace)
	}
	if len(rep.AddedAttributes) > 0 {
		fmt.Fprintf(e.stdout, "search attributes: added %s\n", strings.Join(rep.AddedAttributes, ", "))
	} else {
		fmt.Fprintln(e.stdout, "search attributes: all there")
	}
	fmt.Fprintf(e.stdout, "a run using them: accepted (waited %s for the cluster to take them up)\n", rep.Waited.Round(100*time.Millisecond))
	fmt.Fprintf(e.stdout, "Temporal at %s is ready for gonogo.\n", tc.Addr)
	return terminal.ExitOK
}

// defaultArtifacts is where a worker keeps artifacts when GONOGO_ARTIFACTS
// is not set: a folder of its data directory, which serves one machine (or
// workers that share the data directory's volume).
func defaultArtifacts(dataDir string) string {
	return "dir:" + filepath.Join(dataDir, "artifacts")
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
