//go:build temporal

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gonogo/gonogo/internal/hangguard"
)

// serverEnv names a Temporal server binary (go install
// go.temporal.io/server/cmd/server@v1.32.1) for the tests that run it in a
// process of its own; test-only: without it they skip.
const serverEnv = "GONOGO_TEMPORAL_SERVER"

// serverConfig is a Temporal server on SQLite, every service on its own
// loopback port, with no dynamic configuration file: the defaults a
// production cluster starts from, none of the test server's settings (it
// refreshes the search attributes' cache on every read, which would hide
// a setup that returns before the cluster took them up).
const serverConfig = `log:
  stdout: true
  level: warn
persistence:
  defaultStore: sqlite-default
  visibilityStore: sqlite-visibility
  numHistoryShards: 1
  datastores:
    sqlite-default:
      sql: &sqlite
        pluginName: "sqlite"
        databaseName: "%[1]s"
        connectAddr: "127.0.0.1"
        connectProtocol: "tcp"
        connectAttributes:
          cache: "private"
          setup: true
          journal_mode: wal
          synchronous: 2
        maxConns: 1
        maxIdleConns: 1
        maxConnLifetime: "1h"
    sqlite-visibility:
      sql: *sqlite
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"
services:
  frontend:
    rpc: {grpcPort: %[2]d, membershipPort: %[3]d, httpPort: %[4]d, bindOnLocalHost: true}
  history:
    rpc: {grpcPort: %[5]d, membershipPort: %[6]d, bindOnLocalHost: true}
  matching:
    rpc: {grpcPort: %[7]d, membershipPort: %[8]d, bindOnLocalHost: true}
  worker:
    rpc: {grpcPort: %[9]d, membershipPort: %[10]d, bindOnLocalHost: true}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "127.0.0.1:%[2]d"
      httpAddress: "127.0.0.1:%[4]d"
dcRedirectionPolicy:
  policy: "noop"
`

// serverProcess is a Temporal server running as a process of its own.
type serverProcess struct {
	addr   string
	log    string
	cmd    *exec.Cmd
	exited chan error
}

// startServerProcess starts the server binary serverEnv names on free
// loopback ports, with its database and log in a temporary folder; it is
// killed when the test ends. Without serverEnv the test skips.
func startServerProcess(t *testing.T) *serverProcess {
	t.Helper()
	bin := os.Getenv(serverEnv)
	if bin == "" {
		t.Skipf("%s is not set: it names a Temporal server binary (go install go.temporal.io/server/cmd/server@v1.32.1) for the tests that run the server in a process of its own", serverEnv)
	}
	if _, err := exec.LookPath(bin); err != nil {
		t.Fatalf("%s=%s: %v", serverEnv, bin, err)
	}
	dir := t.TempDir()
	ports := freePorts(t, 9)
	args := []any{filepath.Join(dir, "temporal.db")}
	for _, p := range ports {
		args = append(args, p)
	}
	conf := filepath.Join(dir, "server.yaml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(serverConfig, args...)), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &serverProcess{addr: fmt.Sprintf("127.0.0.1:%d", ports[0]), log: filepath.Join(dir, "server.log"), exited: make(chan error, 1)}
	logf, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	s.cmd = exec.Command(bin, "--config-file", conf, "--allow-no-auth", "start")
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exited <- s.cmd.Wait() }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		s.exited <- <-s.exited
		if t.Failed() {
			t.Logf("the server's log (%s):\n%s", s.log, logTail(s.log, 60))
		}
	})
	return s
}

// kill ends the server at once, as a crash or a lost machine would.
func (s *serverProcess) kill(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.exited:
		s.exited <- err
	case <-time.After(hangguard.Limit(t)):
		t.Fatal("the SIGKILLed server did not exit")
	}
}

// freePorts are n loopback ports nobody listened on a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// logTail is the last n lines of the file at path.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// shell is one terminal's environment: each command it runs is a gonogo
// process of its own (the test binary standing in, see TestMain).
type shell []string

// newShell is the environment of a person at a terminal on the cluster at
// addr, with the built-in example's skills, agent as the agent and data
// and artifacts in folders of their own.
func newShell(t *testing.T, addr, agent string) shell {
	var env shell
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GONOGO_") {
			env = append(env, kv)
		}
	}
	return append(env, "GONOGO_TEST_AS_MAIN=1", "USER=tester", "GONOGO_LOG_LEVEL=warn",
		"GONOGO_TEMPORAL_ADDR="+addr, "GONOGO_TEMPORAL_NAMESPACE=gonogo",
		"GONOGO_DATA_DIR="+t.TempDir(), "GONOGO_ARTIFACTS=dir:"+t.TempDir(),
		"GONOGO_SKILLS_DIR="+filepath.Join(exampleDir(t), "skills"), "GONOGO_RUNNER=command", "GONOGO_RUNNER_CMD="+agent)
}

// elsewhere is the shell of another machine on the same cluster and
// artifact store: its data folder is its own.
func (sh shell) elsewhere(t *testing.T) shell {
	// The last of a variable's values is the one a process gets.
	return append(sh[:len(sh):len(sh)], "GONOGO_DATA_DIR="+t.TempDir())
}

// show is gonogo show --json of run id, from a process of its own.
func (sh shell) show(t *testing.T, id string) (jsonRun, result) {
	t.Helper()
	res := subprocess(t, sh, "", "show", "--json", id)
	var r jsonRun
	if res.code == 0 {
		if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
			t.Fatalf("show --json %s: %v\n%s", id, err, res.stdout)
		}
	}
	return r, res
}

// waitShown asks gonogo show --json until run id stands as ok says; its
// bound only guards against a hang.
func (sh shell) waitShown(t *testing.T, id, what string, ok func(jsonRun) bool) jsonRun {
	t.Helper()
	deadline := hangguard.Deadline(t)
	for {
		r, res := sh.show(t, id)
		if res.code == 0 && ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s never became %s: exit %d, state %q, steps %+v\n%s", id, what, res.code, r.State, r.Steps, res.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
