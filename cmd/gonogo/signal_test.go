package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/internal/terminal"
)

// lockedBuffer is a writer several goroutines may use.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// SIGINT and SIGTERM cancel realMain's context (signal.NotifyContext in
// main). A gonogo run waiting for a decision must then stop at once, keeping
// the run waiting in the store, not wait for its stdin to say something.
func TestSignalAtCheckpointEndsRun(t *testing.T) {
	vars := baseVars(t)
	m := map[string]string{"USER": "tester"}
	for k, v := range vars {
		m[k] = v
	}
	stdin, feed := io.Pipe() // a script (or a person) that has not answered yet
	defer feed.Close()
	var out, errb lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- realMain(ctx, env{
			args:  []string{"run", "--dry-run", filepath.Join(exampleDir(t), "plan.md")},
			stdin: stdin, stdout: &out, stderr: &errb,
			lookup: envconfig.MapLookuper(m), getenv: func(k string) string { return m[k] },
		})
	}()
	deadline := hangguard.Deadline(t)
	for !strings.Contains(out.String(), "NOT EXECUTED - dry run") {
		if time.Now().After(deadline) {
			t.Fatalf("never reached the first checkpoint; stdout %s stderr %s", out.String(), errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel() // what SIGINT or SIGTERM does through signal.NotifyContext
	select {
	case code := <-done:
		if code != terminal.ExitWaiting {
			t.Fatalf("exit %d after the signal, want %d (left waiting)", code, terminal.ExitWaiting)
		}
	case <-time.After(hangguard.Limit(t)):
		feed.Close() // let the stuck driver go, so the test can end
		<-done
		t.Fatalf("gonogo run ignored the signal at a checkpoint; it only ended when stdin closed\nstdout:\n%s", out.String())
	}
}
