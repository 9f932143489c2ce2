package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/internal/doctor"
	"github.com/gonogo/gonogo/internal/terminal"
)

// The Temporal commands refuse a missing or broken configuration before
// they reach any cluster, naming the variable to fix.
func TestTemporalCommandsNeedTheirConfiguration(t *testing.T) {
	dir := t.TempDir()
	cert := filepath.Join(dir, "client.pem")
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := map[string]string{"GONOGO_TEMPORAL_ADDR": "127.0.0.1:1"}
	with := func(extra map[string]string) map[string]string {
		m := baseVars(t)
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"setup without a cluster", nil, []string{"temporal", "setup"}, "GONOGO_TEMPORAL_ADDR is not set"},
		{"worker without a cluster", nil, []string{"worker"}, "GONOGO_TEMPORAL_ADDR is not set"},
		{"temporal alone", nil, []string{"temporal"}, "temporal needs a command: setup"},
		{"a certificate without its key", map[string]string{"GONOGO_TEMPORAL_ADDR": "127.0.0.1:1", "GONOGO_TEMPORAL_TLS_CERT": cert},
			[]string{"temporal", "setup"}, "GONOGO_TEMPORAL_TLS_CERT and GONOGO_TEMPORAL_TLS_KEY go together"},
		{"a CA file with no certificate", map[string]string{"GONOGO_TEMPORAL_ADDR": "127.0.0.1:1", "GONOGO_TEMPORAL_TLS_CA": notPEM},
			[]string{"temporal", "setup"}, "holds no PEM certificate"},
		{"an empty namespace", map[string]string{"GONOGO_TEMPORAL_ADDR": "127.0.0.1:1", "GONOGO_TEMPORAL_NAMESPACE": " "},
			[]string{"temporal", "setup"}, "GONOGO_TEMPORAL_NAMESPACE is empty"},
		{"a heartbeat timeout a live worker cannot keep", map[string]string{"GONOGO_TEMPORAL_ADDR": "127.0.0.1:1", "GONOGO_TEMPORAL_HEARTBEAT": "1s"},
			[]string{"run", "--chain", "deliver-prd"}, "GONOGO_TEMPORAL_HEARTBEAT is 1s; it must be at least 3s"},
		{"a heartbeat timeout that is no duration", map[string]string{"GONOGO_TEMPORAL_ADDR": "127.0.0.1:1", "GONOGO_TEMPORAL_HEARTBEAT": "soon"},
			[]string{"run", "--chain", "deliver-prd"}, "GONOGO_TEMPORAL_HEARTBEAT"},
		{"a negative limit on steps at once", map[string]string{"GONOGO_TEMPORAL_ADDR": "127.0.0.1:1", "GONOGO_TEMPORAL_MAX_STEPS": "-1"},
			[]string{"run", "--chain", "deliver-prd"}, "GONOGO_TEMPORAL_MAX_STEPS is -1; it must be 0 (no limit) or more"},
		{"a limit on steps at once that is no number", map[string]string{"GONOGO_TEMPORAL_ADDR": "127.0.0.1:1", "GONOGO_TEMPORAL_MAX_STEPS": "many"},
			[]string{"run", "--chain", "deliver-prd"}, "GONOGO_TEMPORAL_MAX_STEPS"},
		{"a short retention", addr, []string{"temporal", "setup", "--retention", "1h"}, "a day at least"},
		{"an artifact store gonogo cannot read", map[string]string{"GONOGO_TEMPORAL_ADDR": "127.0.0.1:1", "GONOGO_ARTIFACTS": "ftp://x"},
			[]string{"worker", "--runner", "command", "--runner-cmd", "/bin/true"}, "GONOGO_ARTIFACTS"},
		{"a cluster nobody answers at", addr, []string{"temporal", "setup"}, "cannot reach Temporal at GONOGO_TEMPORAL_ADDR=127.0.0.1:1"},
		// Reading needs no worker, but it needs the cluster: what cannot
		// reach it says so.
		{"runs on a cluster nobody answers at", addr, []string{"runs"}, "cannot reach Temporal at GONOGO_TEMPORAL_ADDR=127.0.0.1:1"},
		{"show on a cluster nobody answers at", addr, []string{"show", "20260101-000000-000000000000"}, "cannot reach Temporal at GONOGO_TEMPORAL_ADDR=127.0.0.1:1"},
		{"export on a cluster nobody answers at", addr, []string{"export", "20260101-000000-000000000000"}, "cannot reach Temporal at GONOGO_TEMPORAL_ADDR=127.0.0.1:1"},
		{"pause on a cluster nobody answers at", addr, []string{"pause", "20260101-000000-000000000000"}, "cannot reach Temporal at GONOGO_TEMPORAL_ADDR=127.0.0.1:1"},
		{"serve asked for a dry run on Temporal", slackOn(addr), []string{"serve", "--dry-run"}, "--dry-run: on Temporal, serve runs no agent"},
		{"serve given a runner on Temporal", slackOn(addr), []string{"serve", "--runner", "codex"}, "give --runner to the workers"},
		{"serve's dry run belongs on the runs or the workers", slackOn(addr), []string{"serve", "--dry-run"}, "--dry-run in the message), or start the workers with --runner dry-run"},
		// The steps run with the workers' agent and skills: run and
		// resume refuse the flags that would choose them here.
		{"run given an agent on Temporal", addr, []string{"run", "--runner-cmd", "/bin/true", "--chain", "deliver-prd"}, "--runner-cmd: on Temporal, run runs no agent"},
		{"run given a runner on Temporal", addr, []string{"run", "--runner", "codex", "--chain", "deliver-prd"}, "give --runner to the workers"},
		{"resume given skills on Temporal", addr, []string{"resume", "--skills", "skills", "20260101-000000-000000000000"}, "--skills: on Temporal, resume runs no agent"},
		{"resume given an agent on Temporal", addr, []string{"resume", "--runner-cmd", "/bin/true", "20260101-000000-000000000000"}, "give --runner-cmd to the workers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := gonogo(t, with(c.vars), "", c.args...)
			if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want exit %d naming %q", res.code, res.stderr, terminal.ExitUsage, c.want)
			}
		})
	}
}

// slackOn is vars with Slack tokens of the right shapes (serve checks
// them before anything else).
func slackOn(vars map[string]string) map[string]string {
	m := map[string]string{"SLACK_APP_TOKEN": "xapp-1-A1-1-aa", "SLACK_BOT_TOKEN": "xoxb-1-1-aa"}
	for k, v := range vars {
		m[k] = v
	}
	return m
}

// doctor asks the cluster GONOGO_TEMPORAL_ADDR names, and says NOT OK when
// nobody answers there.
func TestDoctorReportsAClusterThatDoesNotAnswer(t *testing.T) {
	vars := baseVars(t)
	vars["GONOGO_TEMPORAL_ADDR"] = "127.0.0.1:1"
	res := gonogo(t, vars, "", "doctor", "--dry-run", "--json")
	if res.code != terminal.ExitRefused {
		t.Fatalf("exit %d, want %d\n%s%s", res.code, terminal.ExitRefused, res.stdout, res.stderr)
	}
	var rep doctor.Report
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.OK || rep.Temporal == nil || rep.Temporal.Reachable || !strings.Contains(rep.Temporal.Problem, "cannot reach Temporal") {
		t.Errorf("report: ok %v, temporal %+v", rep.OK, rep.Temporal)
	}
	plain := gonogo(t, baseVars(t), "", "doctor", "--dry-run", "--json")
	if strings.Contains(plain.stdout, `"temporal"`) {
		t.Errorf("doctor without GONOGO_TEMPORAL_ADDR reports a cluster:\n%s", plain.stdout)
	}
}
