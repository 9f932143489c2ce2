package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// NodeNeed is what an agent CLI installed with npm declares of Node (its
// package.json "engines") and the Node it would run on.
type NodeNeed struct {
	Package  string // the npm package whose executable it is
	Declares string // its engines.node, as written; "" when it declares none
	NodePath string // the node it runs on: its #! line's, else the one on PATH
	Node     string // that node's --version ("v20.20.2"); "" when there is none
	// Older: Node does not satisfy Declares.
	Older bool
	// Why says why Node was not compared with Declares, "" when it was.
	Why string
}

// packageFile is the part of an npm package.json CheckNode reads.
type packageFile struct {
	Name    string          `json:"name"`
	Bin     json.RawMessage `json:"bin"`
	Engines struct {
		Node string `json:"node"`
	} `json:"engines"`
}

// CheckNode finds the npm package whose executable path is (an agent CLI
// installed with npm, reached through the link npm put on PATH), reads
// the Node versions it declares, and asks the node it runs on for its
// version, waiting at most timeout. ok is false when path is no npm
// package's executable.
func CheckNode(ctx context.Context, path string, timeout time.Duration) (n NodeNeed, ok bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return n, false
	}
	pkg, ok := owningPackage(real)
	if !ok {
		return n, false
	}
	n.Package, n.Declares = pkg.Name, strings.TrimSpace(pkg.Engines.Node)
	if n.Declares == "" {
		return n, true
	}
	if n.NodePath, err = nodeOf(real); err != nil {
		n.Why = err.Error()
		return n, true
	}
	if n.Node, err = Version(ctx, n.NodePath, []string{"--version"}, timeout); err != nil {
		n.Why = fmt.Sprintf("%s --version: %v", n.NodePath, err)
		return n, true
	}
	older, err := notSatisfied(n.Node, n.Declares)
	if err != nil {
		n.Why = err.Error()
		return n, true
	}
	n.Older = older
	return n, true
}

// owningPackage walks up from the executable at real (a few folders: npm
// puts bins at most that deep) to the package.json whose "bin" names it.
func owningPackage(real string) (packageFile, bool) {
	dir := filepath.Dir(real)
	for range 4 {
		if p, ok := packageOf(dir, real); ok {
			return p, true
		}
		up := filepath.Dir(dir)
		if up == dir {
			break
		}
		dir = up
	}
	return packageFile{}, false
}

// packageOf reads the package.json in dir, if there is one whose "bin"
// names the file real.
func packageOf(dir, real string) (packageFile, bool) {
	var p packageFile
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil || len(b) >= 1<<20 || json.Unmarshal(b, &p) != nil {
		return packageFile{}, false
	}
	return p, binNames(p.Bin, dir, real)
}

// binNames reports whether a package.json "bin" (a path, or names to
// paths) in dir names the file real.
func binNames(raw json.RawMessage, dir, real string) bool {
	for _, p := range binPaths(raw) {
		if r, err := filepath.EvalSymlinks(filepath.Join(dir, filepath.FromSlash(p))); err == nil && r == real {
			return true
		}
	}
	return false
}

// binPaths is the paths a package.json "bin" gives: one path, or the
// paths of a map of names to paths.
func binPaths(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many map[string]string
	if json.Unmarshal(raw, &many) != nil {
		return nil
	}
	paths := make([]string, 0, len(many))
	for _, p := range many {
		paths = append(paths, p)
	}
	return paths
}

// nodeOf is the node an executable runs on: the one its #! line names
// ("#!/usr/bin/env node" looks it up on PATH), else, for an executable
// that is no script (a CLI shipped as a binary whose package still
// declares a Node), the one on PATH.
func nodeOf(real string) (string, error) {
	f, err := os.Open(real)
	if err != nil {
		return "", err
	}
	line, _ := bufio.NewReader(f).ReadString('\n')
	f.Close()
	if interp := interpreter(line); filepath.Base(interp) == "node" {
		p, err := exec.LookPath(interp)
		if err != nil {
			return "", fmt.Errorf("its #! line names %s, which is not there", interp)
		}
		return p, nil
	}
	p, err := exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("no node on PATH")
	}
	return p, nil
}

// interpreter is the program a script's first line runs it with: the
// one its #! line names, or the one "#!/usr/bin/env [-opts] prog" looks up;
// "" when the line is no #! line.
func interpreter(line string) string {
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if !strings.HasPrefix(line, "#!") || len(fields) == 0 {
		return ""
	}
	if filepath.Base(fields[0]) != "env" {
		return fields[0]
	}
	for _, f := range fields[1:] {
		if !strings.HasPrefix(f, "-") {
			return f
		}
	}
	return ""
}

// notSatisfied reports whether version (as node --version prints it) is
// outside the npm range declared: alternatives joined by "||", each a
// few comparators (">=22.0.0", ">=18 <23", "^20.9", "22.x"). A range of
// another form is an error: it is said, not guessed.
func notSatisfied(version, declared string) (bool, error) {
	v, err := semver(strings.TrimPrefix(strings.TrimSpace(version), "v"))
	if err != nil {
		return false, fmt.Errorf("node --version said %q", version)
	}
	for _, alt := range strings.Split(declared, "||") {
		ok, err := satisfiesAll(v, strings.Fields(alt))
		if err != nil {
			return false, fmt.Errorf("the range %q is not one gonogo compares", declared)
		}
		if ok {
			return false, nil
		}
	}
	return true, nil
}

func satisfiesAll(v [3]int, comps []string) (bool, error) {
	if len(comps) == 0 {
		return false, fmt.Errorf("empty range")
	}
	for _, c := range comps {
		ok, err := satisfies(v, c)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// satisfies reports whether v meets one comparator c (">=18", "^20.9").
func satisfies(v [3]int, c string) (bool, error) {
	op := strings.TrimRight(c[:min(2, len(c))], "0123456789vx*.")
	want, err := semver(strings.TrimPrefix(strings.TrimPrefix(c, op), "v"))
	if err != nil {
		return false, err
	}
	cmp := compare(v, want)
	switch op {
	case ">=":
		return cmp >= 0, nil
	case ">":
		return cmp > 0, nil
	case "<=":
		return cmp <= 0, nil
	case "<":
		return cmp < 0, nil
	case "~":
		return cmp >= 0 && v[0] == want[0] && v[1] == want[1], nil
	case "^", "", "=":
		// "22" and "22.x" are any 22; an exact pin is read as its major
		// version and up, as a caret range is.
		return cmp >= 0 && v[0] == want[0], nil
	}
	return false, fmt.Errorf("operator %q", op)
}

// semver reads "22", "22.1", "22.1.3", "22.x": missing or wildcard parts
// are 0.
func semver(s string) ([3]int, error) {
	var v [3]int
	parts := strings.Split(s, ".")
	if s == "" || len(parts) > 3 {
		return v, fmt.Errorf("version %q", s)
	}
	for i, p := range parts {
		if wildcard[p] {
			break
		}
		n, err := strconv.Atoi(strings.SplitN(p, "-", 2)[0])
		if err != nil || n < 0 {
			return v, fmt.Errorf("version %q", s)
		}
		v[i] = n
	}
	return v, nil
}

// wildcard is the version parts that stand for any number.
var wildcard = map[string]bool{"x": true, "X": true, "*": true}

func compare(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
