package runner

// Agent records: while an agent runs, a small file under Config.AgentsDir
// names its process group. The kernel's parent-death signal kills only the
// group's leader when gonogo dies; what the leader started lives on in the
// group. The next gonogo to take the data directory reads the records the
// dead one left and kills those groups (ReapAgents).

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// agentMarkerEnv carries a random value, one per agent, into the agent's
// environment and from there into everything it starts. A process found in
// a recorded group is killed only when it carries the recorded value (or is
// the recorded leader itself), so a group id the system has since given to
// someone else is never touched.
const agentMarkerEnv = "GONOGO_AGENT_ID"

// agentRecord is one running agent, as kept on disk.
type agentRecord struct {
	PGID       int       `json:"pgid"`
	Start      uint64    `json:"start"` // the leader's start time, clock ticks after boot (/proc/PID/stat)
	Boot       string    `json:"boot_id"`
	Marker     string    `json:"marker"`
	Owner      int       `json:"owner_pid"` // the gonogo that started it
	OwnerStart uint64    `json:"owner_start"`
	Cmd        string    `json:"cmd"`
	Run        string    `json:"run,omitempty"`
	Step       int       `json:"step,omitempty"`
	Attempt    int       `json:"attempt,omitempty"`
	Started    time.Time `json:"started"`

	path string
}

func newAgentMarker() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// recordAgent writes the record of an agent just started as the leader of
// group pgid. Failing to write it costs only the clean-up after a crash, so
// callers go on without it.
func recordAgent(dir string, pgid int, marker, cmd string, env []string) (*agentRecord, error) {
	start, err := procStart(pgid)
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	selfStart, err := procStart(self)
	if err != nil {
		return nil, err
	}
	rec := &agentRecord{
		PGID: pgid, Start: start, Boot: bootID(), Marker: marker, Owner: self, OwnerStart: selfStart,
		Cmd: cmd, Run: envValue(env, "GONOGO_RUN_ID"), Started: time.Now().UTC(),
	}
	rec.Step, _ = strconv.Atoi(envValue(env, "GONOGO_STEP"))
	rec.Attempt, _ = strconv.Atoi(envValue(env, "GONOGO_ATTEMPT"))
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("agent record: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("agent record: %w", err)
	}
	rec.path = filepath.Join(dir, fmt.Sprintf("%d-%d.json", self, pgid))
	if err := writeWhole(rec.path, b); err != nil {
		return nil, fmt.Errorf("agent record: %w", err)
	}
	return rec, nil
}

// writeWhole writes b to path whole, then renames it into place, so a
// reader never sees half of it. No fsync: the record matters after gonogo
// dies, not after the machine does, which ends the agent too.
func writeWhole(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

func (r *agentRecord) remove() { _ = os.Remove(r.path) }

// Leftover is an agent that a gonogo which is no longer running left
// behind, and that ReapAgents killed.
type Leftover struct {
	PGID    int    // the agent's process group
	PIDs    []int  // the processes killed
	Cmd     string // the agent executable
	Run     string // the run, step and attempt it was working on
	Step    int
	Attempt int
	Started time.Time
}

// ReapAgents kills the agents recorded in dir by a gonogo that is no longer
// running, with everything still in their process groups, and removes
// their records. A process is killed only when it is provably the one
// recorded (the leader by its pid and start time, any other member by the
// marker in its environment), never a stranger that inherited a reused
// pid. Records of a gonogo still running are left alone, and so are
// records this user does not own (reported in the error).
//
// The caller must hold the data directory (the store's lock), so that no
// other gonogo starts agents there meanwhile.
func ReapAgents(dir string) ([]Leftover, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("agent records: %w", err)
	}
	boot := bootID()
	var out []Leftover
	var errs []error
	for _, e := range entries {
		left, err := reapEntry(filepath.Join(dir, e.Name()), boot)
		if err != nil {
			errs = append(errs, err)
		}
		if left != nil {
			out = append(out, *left)
		}
	}
	return out, errors.Join(errs...)
}

// reapEntry kills what the agent record at path names, when the gonogo
// that wrote it on this boot is gone, and removes the record; a half
// written record is removed, anything that is no record left alone.
func reapEntry(path, boot string) (*Leftover, error) {
	switch {
	case strings.HasSuffix(path, ".tmp"):
		_ = os.Remove(path)
		return nil, nil
	case !strings.HasSuffix(path, ".json"):
		return nil, nil
	}
	rec, err := loadRecord(path)
	if err != nil || rec == nil {
		return nil, err
	}
	if rec.Boot == boot && running(rec.Owner, rec.OwnerStart) {
		return nil, nil
	}
	var left *Leftover
	if rec.Boot == boot {
		left = rec.leftover(killGroup(*rec))
	}
	// After a reboot nothing recorded can still be running.
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return left, err
	}
	return left, nil
}

// loadRecord reads the agent record at path; nil, and the record removed,
// when it does not decode into one that names a group.
func loadRecord(path string) (*agentRecord, error) {
	b, err := readOwnRecord(path)
	if err != nil {
		return nil, err
	}
	var rec agentRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.PGID <= 1 {
		_ = os.Remove(path) // unreadable: it can name nothing safely
		return nil, nil
	}
	return &rec, nil
}

// leftover is what ReapAgents reports of the agent rec, whose processes
// pids it killed; nil when it killed none.
func (r agentRecord) leftover(pids []int) *Leftover {
	if len(pids) == 0 {
		return nil
	}
	return &Leftover{PGID: r.PGID, PIDs: pids, Cmd: r.Cmd, Run: r.Run, Step: r.Step, Attempt: r.Attempt, Started: r.Started}
}

// maxRecord is far above any record's size: a bigger file is none.
const maxRecord = 64 << 10

// readOwnRecord reads an agent record that this user owns, and refuses
// anything else, unread: a record names processes to kill, so one that
// another user wrote (or a link to elsewhere) is not to be trusted.
func readOwnRecord(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("agent record %s is a symbolic link: not trusted, left alone", path)
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := untrusted(path, st); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, maxRecord))
}

// untrusted refuses a record that is no regular file this user owns.
func untrusted(path string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("agent record %s is not a regular file: not trusted, left alone", path)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("agent record %s belongs to uid %d, not to this user (uid %d): not trusted, left alone", path, sys.Uid, os.Geteuid())
	}
	return nil
}

// killGroup SIGKILLs the processes that are provably the recorded
// agent's, in its group or detached from it, and returns their pids: the
// leader by its pid and start time, any other by its marker.
func killGroup(rec agentRecord) []int {
	var killed []int
	if st, err := readStat(rec.PGID); err == nil && !st.dead() && st.start == rec.Start && killExact(rec.PGID, rec.Start) {
		killed = append(killed, rec.PGID)
	}
	for _, p := range killMarked(rec.Marker, rec.Start) {
		if p.pid != rec.PGID {
			killed = append(killed, p.pid)
		}
	}
	return killed
}

// running reports whether the process pid is running and is the one that
// started at start.
func running(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	st, err := readStat(pid)
	// A zombie has exited: its parent has not collected it yet, but it
	// holds no lock and runs nothing.
	return err == nil && st.start == start && st.state != 'Z' && st.state != 'X'
}

// envValue returns the value of key in env (KEY=VALUE entries, the last
// one winning), or "".
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}
