// Command fakeagent stands in for an agent executable in gonogo's tests. It
// accepts the arguments gonogo gives Claude Code (-p, --output-format FORMAT,
// --verbose, --add-dir DIR), Codex (exec, --json, --skip-git-repo-check, -)
// and Gemini CLI (--include-directories DIR), --model NAME, and its own,
// which script what it does. Whatever their order, it does these things in
// this order:
//
//	(always)              read all of stdin
//	--argv-to PATH        write its arguments to PATH, one per line
//	--stdin-to PATH       write what it read on stdin to PATH
//	--env-to PATH         write its GONOGO_* (but GONOGO_AGENT_ID, random), SLACK_* and FAKE_*
//	                      variables to PATH, sorted
//	--all-env-to PATH     write its whole environment to PATH, sorted
//	--ignore-term         ignore SIGTERM (it and its children)
//	--child PATH          start a child in its process group that sleeps an hour
//	                      holding stdout and stderr; write the child's pid to PATH
//	--escaped-child PATH  the same, but the child leaves for a session of its own
//	--stderr-fill N       write N bytes of filler lines to stderr
//	--stderr TEXT         write TEXT and a newline to stderr
//	--replay PATH         copy the file PATH to stdout
//	--line-delay MS       while replaying, wait MS milliseconds after each line
//	--echo-stdin          copy what it read on stdin to stdout
//	--flood N             write N bytes of 'x' lines to stdout
//	--hang                sleep for an hour
//	--die SIGNAL          kill itself with KILL or TERM
//	--exit N              exit with status N (default 0)
//
// With --sleep alone it only sleeps an hour (what the children run).
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type script struct {
	argvTo, stdinTo, envTo string
	allEnvTo               string
	ignoreTerm             bool
	child, escapedChild    string
	stderrFill             int
	stderr                 []string
	replay                 string
	lineDelay              time.Duration
	echoStdin              bool
	flood                  int
	hang                   bool
	die                    string
	exit                   int
}

func main() {
	args := os.Args[1:]
	if len(args) == 1 && args[0] == "--sleep" {
		time.Sleep(time.Hour)
		return
	}
	s, err := parse(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		os.Exit(2)
	}
	if err := s.run(args); err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		os.Exit(2)
	}
	os.Exit(s.exit)
}

func parse(args []string) (*script, error) {
	s := &script{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs a value", a)
			}
			i++
			return args[i], nil
		}
		number := func() (int, error) {
			v, err := value()
			if err != nil {
				return 0, err
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", a, err)
			}
			return n, nil
		}
		var err error
		switch a {
		case "-p", "--verbose", "exec", "--json", "--skip-git-repo-check", "-":
		case "--output-format", "--add-dir", "--include-directories", "--model":
			_, err = value()
		case "--line-delay":
			var ms int
			ms, err = number()
			s.lineDelay = time.Duration(ms) * time.Millisecond
		case "--argv-to":
			s.argvTo, err = value()
		case "--stdin-to":
			s.stdinTo, err = value()
		case "--env-to":
			s.envTo, err = value()
		case "--all-env-to":
			s.allEnvTo, err = value()
		case "--ignore-term":
			s.ignoreTerm = true
		case "--child":
			s.child, err = value()
		case "--escaped-child":
			s.escapedChild, err = value()
		case "--stderr-fill":
			s.stderrFill, err = number()
		case "--stderr":
			var v string
			v, err = value()
			s.stderr = append(s.stderr, v)
		case "--replay":
			s.replay, err = value()
		case "--echo-stdin":
			s.echoStdin = true
		case "--flood":
			s.flood, err = number()
		case "--hang":
			s.hang = true
		case "--die":
			s.die, err = value()
		case "--exit":
			s.exit, err = number()
		default:
			return nil, fmt.Errorf("unknown argument %q", a)
		}
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *script) run(args []string) error {
	stdin, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	for _, step := range []func() error{
		func() error { return s.record(args, stdin) },
		s.spawn,
		func() error { return s.write(stdin) },
		s.end,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// record writes what the agent was given (argv, stdin, environment) to the
// files the test named.
func (s *script) record(args []string, stdin []byte) error {
	if s.argvTo != "" {
		if err := os.WriteFile(s.argvTo, []byte(strings.Join(args, "\n")+"\n"), 0o600); err != nil {
			return err
		}
	}
	if s.stdinTo != "" {
		if err := os.WriteFile(s.stdinTo, stdin, 0o600); err != nil {
			return err
		}
	}
	if s.allEnvTo != "" {
		if err := writeEnv(s.allEnvTo, func(string) bool { return true }); err != nil {
			return err
		}
	}
	if s.envTo == "" {
		return nil
	}
	return writeEnv(s.envTo, func(kv string) bool {
		if strings.HasPrefix(kv, "GONOGO_AGENT_ID=") {
			return false
		}
		return strings.HasPrefix(kv, "GONOGO_") || strings.HasPrefix(kv, "SLACK_") || strings.HasPrefix(kv, "FAKE_")
	})
}

// writeEnv writes the variables of its environment that keep says to
// keep to path, sorted, one a line.
func writeEnv(path string, keep func(kv string) bool) error {
	var vars []string
	for _, kv := range os.Environ() {
		if keep(kv) {
			vars = append(vars, kv)
		}
	}
	sort.Strings(vars)
	return os.WriteFile(path, []byte(strings.Join(vars, "\n")+"\n"), 0o600)
}

// spawn ignores SIGTERM and starts children when asked.
func (s *script) spawn() error {
	if s.ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if s.child != "" {
		if err := startChild(s.child, false); err != nil {
			return err
		}
	}
	if s.escapedChild != "" {
		return startChild(s.escapedChild, true)
	}
	return nil
}

// write produces the agent's output: stderr lines, a replayed stream, the
// prompt echoed back, or a flood of bytes.
func (s *script) write(stdin []byte) error {
	if s.stderrFill > 0 {
		line := strings.Repeat("filler ", 9) + "\n"
		fill := bytes.Repeat([]byte(line), s.stderrFill/len(line)+1)[:s.stderrFill]
		os.Stderr.Write(fill)
	}
	for _, line := range s.stderr {
		fmt.Fprintln(os.Stderr, line)
	}
	if s.replay != "" {
		if err := replay(s.replay, s.lineDelay); err != nil {
			return err
		}
	}
	if s.echoStdin {
		if _, err := os.Stdout.Write(stdin); err != nil {
			return err
		}
	}
	line := []byte(strings.Repeat("x", 99) + "\n")
	for n := 0; n < s.flood; n += len(line) {
		chunk := line
		if s.flood-n < len(chunk) {
			chunk = chunk[:s.flood-n]
		}
		if _, err := os.Stdout.Write(chunk); err != nil {
			return err
		}
	}
	return nil
}

// end hangs or dies when asked.
func (s *script) end() error {
	if s.hang {
		time.Sleep(time.Hour)
	}
	switch s.die {
	case "":
	case "KILL":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Hour)
	case "TERM":
		signal.Reset(syscall.SIGTERM)
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		time.Sleep(time.Hour)
	default:
		return fmt.Errorf("--die %s: only KILL and TERM", s.die)
	}
	return nil
}

// startChild starts a sleeping copy of this program that inherits stdout and
// stderr, and writes its pid to pidFile before returning.
func startChild(pidFile string, escape bool) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "--sleep")
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	if escape {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	return os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
}

// replay copies the file at path to stdout, a line at a time with delay
// after each when delay is set.
func replay(path string, delay time.Duration) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if delay <= 0 {
		_, err = os.Stdout.Write(b)
		return err
	}
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if _, err := os.Stdout.Write(line); err != nil {
			return err
		}
		time.Sleep(delay)
	}
	return nil
}
