package temporalbackend

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
)

// ErrNoCluster is the refusal of a Temporal command with no cluster named.
var ErrNoCluster = errors.New("GONOGO_TEMPORAL_ADDR is not set: this command works on a Temporal cluster; set it to the cluster's frontend address (host:port, for example localhost:7233)")

// DialOptions name the cluster to reach, as the GONOGO_TEMPORAL_*
// variables do: the frontend address, the namespace, and the TLS files.
// Any of the TLS fields turns TLS on; a client certificate needs its key.
type DialOptions struct {
	Addr, Namespace                       string
	TLSCert, TLSKey, TLSCA, TLSServerName string
}

// tlsConfig is the TLS the options ask for; nil when none is set.
func (o DialOptions) tlsConfig() (*tls.Config, error) {
	if o.TLSCert == "" && o.TLSKey == "" && o.TLSCA == "" && o.TLSServerName == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.TLSServerName}
	switch {
	case (o.TLSCert == "") != (o.TLSKey == ""):
		return nil, errors.New("configuration: GONOGO_TEMPORAL_TLS_CERT and GONOGO_TEMPORAL_TLS_KEY go together: set both (a client certificate and its key) or neither")
	case o.TLSCert != "":
		pair, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("configuration: GONOGO_TEMPORAL_TLS_CERT=%q, GONOGO_TEMPORAL_TLS_KEY=%q: %w", o.TLSCert, o.TLSKey, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if o.TLSCA != "" {
		pem, err := os.ReadFile(o.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("configuration: GONOGO_TEMPORAL_TLS_CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("configuration: GONOGO_TEMPORAL_TLS_CA=%q holds no PEM certificate", o.TLSCA)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// Dial connects to the cluster o names, logging through log. Without an
// address it refuses with ErrNoCluster.
func Dial(ctx context.Context, o DialOptions, log *slog.Logger) (client.Client, error) {
	if o.Addr == "" {
		return nil, ErrNoCluster
	}
	tlsCfg, err := o.tlsConfig()
	if err != nil {
		return nil, err
	}
	c, err := client.DialContext(ctx, client.Options{
		HostPort:          o.Addr,
		Namespace:         o.Namespace,
		Logger:            tlog.NewStructuredLogger(log),
		ConnectionOptions: client.ConnectionOptions{TLS: tlsCfg},
	})
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at GONOGO_TEMPORAL_ADDR=%s: %w", o.Addr, err)
	}
	return c, nil
}
