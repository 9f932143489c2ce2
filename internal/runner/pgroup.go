package runner

// The Linux process handling lives in this file: process groups, the
// parent-death signal, the group-wide signals, the exit wait that leaves the
// leader unreaped, and what the agent records read from /proc (start times,
// group members, environments) and the exact kill through a pidfd.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// ownGroup starts the agent as the leader of a new process group, so one
// signal reaches everything it starts, and has the kernel SIGKILL it when
// gonogo dies, even by SIGKILL. The parent-death signal reaches only the
// leader, and it fires when the OS thread that started it exits: startLocked
// keeps that thread alive for the leader's life, and the agent records
// (agents.go) let the next gonogo stop the rest of the group.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
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

// procStat is what gonogo reads from /proc/PID/stat.
type procStat struct {
	pid     int
	state   byte // R, S, D, Z (a zombie), ...
	ppid    int
	pgrp    int
	session int
	start   uint64 // clock ticks after boot
}

// dead reports whether the process has exited (a zombie, or on its way).
func (p procStat) dead() bool { return p.state == 'Z' || p.state == 'X' }

// readStat reads /proc/PID/stat. The command name (field 2) may hold
// spaces and parentheses, so the fields are counted from its last ')'.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): ppid is field 4, pgrp 5, session 6,
	// starttime 22.
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	session, err3 := strconv.Atoi(f[3])
	start, err4 := strconv.ParseUint(f[19], 10, 64)
	if errors.Join(err1, err2, err3, err4) != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unreadable", pid)
	}
	return procStat{pid: pid, state: f[0][0], ppid: ppid, pgrp: pgrp, session: session, start: start}, nil
}

// procStart returns when the process pid started, in clock ticks after
// boot: with the pid, it names one process for the whole uptime.
func procStart(pid int) (uint64, error) {
	st, err := readStat(pid)
	return st.start, err
}

// bootID names this boot of the machine; start times are counted from it.
func bootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}

// processes lists every process gonogo can see, zombies included.
func processes() []procStat {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procStat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(pid); err == nil {
			out = append(out, st)
		}
	}
	return out
}

// carries reports whether process pid started with marker as its
// GONOGO_AGENT_ID. Another user's process, or one gone, does not.
func carries(pid int, marker string) bool {
	if marker == "" {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	entry := []byte(agentMarkerEnv + "=" + marker + "\x00")
	return bytes.HasPrefix(b, entry) || bytes.Contains(b, append([]byte{0}, entry...))
}

// procEnviron returns the environment process pid started with; nil when
// it cannot be read (another user's process, a zombie).
func procEnviron(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// killExact SIGKILLs the process pid only if it is still the one that
// started at start.
func killExact(pid int, start uint64) bool { return signalExact(pid, start, syscall.SIGKILL) }

// signalExact sends sig to the process pid only if it is still the one
// that started at start. The process is held by a pidfd (os.FindProcess on
// Linux) before its start time is checked again, so the pid cannot pass to
// another process between the check and the signal.
func signalExact(pid int, start uint64, sig syscall.Signal) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	defer p.Release()
	if st, err := procStart(pid); err != nil || st != start {
		return false
	}
	return p.Signal(sig) == nil
}

// BecomeSubreaper makes this process the child subreaper of everything it
// starts (prctl PR_SET_CHILD_SUBREAPER): a process an agent detaches from
// itself (setsid, a double fork) is then adopted by gonogo rather than by
// init, so that gonogo can still tell it from the rest of the system
// (stopStrays) and collects it once it is dead (reapAdopted).
func BecomeSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", errno)
	}
	return nil
}

// reap collects the exit status of pid, a child of this process that is
// dead or dying; it waits only for that pid, so no exec.Cmd loses its own.
func reap(pid int) {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			return
		}
	}
}
