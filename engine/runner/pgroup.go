package runner

// The Linux process handling lives in this file: process groups, the
// group-wide signals and the exit wait that leaves the leader unreaped.

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"
)

// ownGroup starts the agent as the leader of a new process group, so one
// signal reaches everything it starts. Pdeathsig is left alone on purpose: it
// fires when the OS thread that started the child exits, which the Go runtime
// may do long before gonogo does.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends SIGTERM, or SIGKILL when kill is set, to every process in
// the group. A group that is already gone is not an error.
func signalGroup(pgid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-pgid, sig)
}

// waitExited blocks until the process has exited but leaves it a zombie
// (WNOWAIT): while it is unreaped its pid, which is also its process group's
// id, cannot name another process, so killing the group afterwards cannot
// hit a stranger.
func waitExited(pid int) error {
	const (
		pPID    = 1          // P_PID
		wEXITED = 0x4        // WEXITED
		wNOWAIT = 0x01000000 // WNOWAIT
	)
	var info [128]byte // siginfo_t, filled in and ignored
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), wEXITED|wNOWAIT, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		default:
			return fmt.Errorf("waitid %d: %w", pid, errno)
		}
	}
}

// signalNames are the usual names of the signals an agent dies from.
var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS:  "SIGBUS",
	syscall.SIGFPE:  "SIGFPE",
	syscall.SIGHUP:  "SIGHUP",
	syscall.SIGILL:  "SIGILL",
	syscall.SIGINT:  "SIGINT",
	syscall.SIGKILL: "SIGKILL",
	syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGSEGV: "SIGSEGV",
	syscall.SIGTERM: "SIGTERM",
	syscall.SIGXCPU: "SIGXCPU",
}

// deathSignal names the signal the process died from, or "" when it exited.
func deathSignal(ps *os.ProcessState) string {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ""
	}
	sig := ws.Signal()
	if name, ok := signalNames[sig]; ok {
		return fmt.Sprintf("%s (signal %d, %s)", name, int(sig), sig)
	}
	return fmt.Sprintf("signal %d (%s)", int(sig), sig)
}
