package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"
	"unsafe"

	"github.com/sethvargo/go-envconfig"

	"github.com/gonogo/gonogo/internal/terminal"
)

// openPTY opens a pseudo-terminal: what is written to master is typed at
// slave, a real terminal device, with its line discipline.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("unlock the pseudo-terminal: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("name the pseudo-terminal: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	go func() { _, _ = io.Copy(io.Discard, m) }() // the terminal's echo
	return m, s
}

// On a real terminal the abort's confirmation is one key: y, with no
// Enter, aborts the run (a terminal in line mode would hold the y until
// Enter, and the run would never end).
func TestAbortConfirmIsOneKey(t *testing.T) {
	vars := baseVars(t)
	workAgent(t, vars)
	master, slave := openPTY(t)
	m := map[string]string{"USER": "tester"}
	for k, v := range vars {
		m[k] = v
	}
	out := &lockedBuffer{}
	s := &session{t: t, out: out, done: make(chan int, 1)}
	go func() {
		s.done <- realMain(context.Background(), env{
			args: []string{"run", "--chain", "deliver-prd -- x"}, stdin: slave, stdout: out, stderr: out,
			lookup: envconfig.MapLookuper(m), getenv: func(k string) string { return m[k] },
		})
	}()
	s.waitFor("a[b]ort >", 1)
	if _, err := io.WriteString(master, "b\n"); err != nil {
		t.Fatal(err)
	}
	s.waitFor("Abort the run?", 1)
	if _, err := io.WriteString(master, "y"); err != nil {
		t.Fatal(err)
	}
	if code := s.exit(); code != terminal.ExitRefused {
		t.Fatalf("exit %d, want %d (aborted)\n%s", code, terminal.ExitRefused, out.String())
	}
	if run := showRun(t, vars, runID(t, out.String())); run.State != "aborted" {
		t.Fatalf("run %s, want aborted", run.State)
	}
}
