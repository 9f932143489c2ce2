package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run kept on a cluster has its artifact files written under runs/<run>/
// beside a mark saying where it is kept; nothing outside the run's folder
// can be written or removed through it.
func TestRunFilesStayInTheirRunsFolder(t *testing.T) {
	dir := t.TempDir()
	const id = "20260501-090000-abc"
	f, err := OpenRunFiles(dir, id, "the Temporal cluster at localhost:7233")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := "runs/" + id + "/01-deliver-prd.md"
	if err := f.Write(p, []byte("# PRD\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p))); err != nil || string(got) != "# PRD\n" {
		t.Errorf("%s holds %q, %v", p, got, err)
	}
	mark, err := os.ReadFile(filepath.Join(dir, "runs", id, ClusterMark))
	if err != nil || !strings.Contains(string(mark), "localhost:7233") {
		t.Errorf("the run's mark: %q, %v", mark, err)
	}
	for _, bad := range []string{"runs/20260501-090000-def/01-x.md", "runs/" + id + "/" + ClusterMark, "runs/" + id + "/../x.md",
		"/etc/passwd", "gonogo.db", "runs/" + id} {
		if err := f.Write(bad, []byte("x")); err == nil {
			t.Errorf("Write(%q) was accepted", bad)
		}
		if err := f.Remove(bad); err == nil {
			t.Errorf("Remove(%q) was accepted", bad)
		}
	}
	if err := f.Remove(p); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after Remove: %v", p, err)
	}
	if err := f.Remove(p); err != nil {
		t.Errorf("removing a file already gone: %v", err)
	}
	if _, err := OpenRunFiles(dir, "../../etc", "x"); err == nil {
		t.Error("OpenRunFiles accepted a run id that is a path")
	}
}

// The folders of runs kept on a cluster are no runs of a lost gonogo.db:
// a store opens beside them, and one folder without the mark is still
// refused.
func TestClusterRunsAreNoLostStore(t *testing.T) {
	dir := t.TempDir()
	f, err := OpenRunFiles(dir, "20260501-090000-abc", "the Temporal cluster at localhost:7233")
	if err != nil {
		t.Fatal(err)
	}
	must(t, f.Write("runs/20260501-090000-abc/01-deliver-prd.md", []byte("# PRD\n")))
	must(t, f.Close())
	if missing, err := Missing(dir); !missing || err != nil {
		t.Fatalf("Missing beside a cluster run's files: %t, %v; want a missing store, no error", missing, err)
	}
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open beside a cluster run's files: %v", err)
	}
	must(t, db.Close())

	other := t.TempDir()
	f, err = OpenRunFiles(other, "20260501-090000-abc", "the Temporal cluster at localhost:7233")
	if err != nil {
		t.Fatal(err)
	}
	must(t, f.Write("runs/20260501-090000-abc/01-deliver-prd.md", []byte("# PRD\n")))
	must(t, f.Close())
	must(t, os.MkdirAll(filepath.Join(other, "runs", "r0001"), 0o700))
	if _, err := Open(other, Options{}); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "1 run") {
		t.Errorf("Open beside a bbolt run's folder with no gonogo.db: %v; want it refused for 1 run", err)
	}
}
