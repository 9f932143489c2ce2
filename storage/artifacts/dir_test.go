package artifacts

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dirFixture is a Dir at <tmp>/store; stored lists all of <tmp>, so a file
// written beside the store shows.
func dirFixture(t *testing.T) fixture {
	parent := t.TempDir()
	root := filepath.Join(parent, "store")
	a, err := NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{
		a: a, b: b,
		stored: func(t *testing.T) []string { return filesUnder(t, parent) },
		name:   func(key string) string { return "store/" + key },
	}
}

func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		names = append(names, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func TestDir(t *testing.T) {
	testStore(t, dirFixture)
}

func TestDirModes(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	d, err := NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	const key = "20261127-015533-1a2b3c4d/01-deliver-prd.attempt-1.md"
	if err := d.Put(t.Context(), key, []byte("x")); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]fs.FileMode{
		root:                                   fs.ModeDir | 0o700,
		filepath.Join(root, filepath.Dir(key)): fs.ModeDir | 0o700,
		filepath.Join(root, filepath.FromSlash(key)): 0o600,
	} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}
}

func TestNewDir(t *testing.T) {
	t.Run("relative path made absolute", func(t *testing.T) {
		t.Chdir(t.TempDir())
		d, err := NewDir("arts")
		if err != nil {
			t.Fatal(err)
		}
		wd, _ := os.Getwd()
		if want := filepath.Join(wd, "arts"); d.Path() != want {
			t.Fatalf("Path = %s, want %s", d.Path(), want)
		}
	})
	t.Run("a missing directory is made by the first put only", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "deep", "arts")
		d, err := NewDir(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Get(t.Context(), "run/a.md"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get from a directory never written: %v, want ErrNotFound", err)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("reading created the directory: %v", err)
		}
		if err := d.Put(t.Context(), "run/a.md", []byte("a")); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("after a put the directory is %v, %v; want one with mode 0700", fi, err)
		}
	})
	t.Run("a file is not a directory", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := NewDir(file); err == nil {
			t.Fatal("NewDir on a file succeeded")
		}
	})
}

// A symlink inside the directory cannot carry a key outside it.
func TestDirSymlinkStaysInside(t *testing.T) {
	parent := t.TempDir()
	outside := filepath.Join(parent, "outside")
	if err := os.Mkdir(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(parent, "store"), 0o700); err != nil {
		t.Fatal(err)
	}
	d, err := NewDir(filepath.Join(parent, "store"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(d.Path(), "run")); err != nil {
		t.Fatal(err)
	}
	if err := d.Put(t.Context(), "run/01-x.attempt-1.md", []byte("x")); err == nil {
		t.Fatal("Put through a symlink leading outside succeeded")
	}
	if got := filesUnder(t, outside); len(got) != 0 {
		t.Fatalf("written outside the store: %q", got)
	}
}

// helperEnv makes the test binary a child that puts one body into a Dir
// (see TestMain); its value is the Dir's path, then the key and the body,
// separated by newlines.
const helperEnv = "ARTIFACTS_TEST_PUT"

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(childPut(spec))
	}
	os.Exit(m.Run())
}

// childPut exits 0 when it stored its body, 3 on ErrExists, 1 on anything
// else.
func childPut(spec string) int {
	parts := strings.SplitN(spec, "\n", 3)
	if len(parts) != 3 {
		return 1
	}
	d, err := NewDir(parts[0])
	if err == nil {
		err = d.Put(context.Background(), parts[1], []byte(parts[2]))
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrExists):
		return 3
	}
	os.Stderr.WriteString(err.Error())
	return 1
}

// Separate processes race for one key: exactly one stores its body.
func TestDirProcessesRace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	root := t.TempDir()
	const key, procs = "run/01-x.attempt-1.md", 4
	cmds := make([]*exec.Cmd, procs)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^$")
		cmds[i].Env = append(os.Environ(), helperEnv+"="+root+"\n"+key+"\nprocess "+strconv.Itoa(i))
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	winner := -1
	for i, c := range cmds {
		err := c.Wait()
		var exit *exec.ExitError
		switch {
		case err == nil:
			if winner >= 0 {
				t.Fatalf("processes %d and %d both stored", winner, i)
			}
			winner = i
		case errors.As(err, &exit) && exit.ExitCode() == 3:
		default:
			t.Fatalf("process %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no process stored")
	}
	d, _ := NewDir(root)
	got, err := d.Get(t.Context(), key)
	if want := "process " + strconv.Itoa(winner); err != nil || string(got) != want {
		t.Fatalf("Get = %q, %v; want %q", got, err, want)
	}
}
