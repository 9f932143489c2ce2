package doctor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/storage"
)

// A data directory doctor cannot create is one whose path runs through a
// file: tests run as root, whom mode bits do not stop.
func TestCheckDataCreatesNothingAndSaysWhatItFinds(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "notes.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		dir  string
		want Data
	}{
		{"missing, can be created", filepath.Join(tmp, "a", "b"), Data{Writable: true, Store: "none"}},
		{"through a file", filepath.Join(file, "data"),
			Data{Store: "none", NotWritable: "it cannot be created: " + file + " is a file, not a directory"}},
		{"a file", file, Data{Exists: true, Store: "error", StoreError: "not a directory", NotWritable: "it is a file, not a directory"}},
		{"empty folder", tmp, Data{Exists: true, Writable: true, Store: "none"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := checkData(t.Context(), Config{DataDir: c.dir})
			c.want.Dir = c.dir
			if got.Dir != c.want.Dir || got.Exists != c.want.Exists || got.Writable != c.want.Writable || got.NotWritable != c.want.NotWritable ||
				got.Store != c.want.Store || got.StoreError != c.want.StoreError || len(got.Runs) != 0 {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(tmp, "a")); !os.IsNotExist(err) {
		t.Errorf("doctor created part of a missing data directory (stat: %v)", err)
	}
	left, err := filepath.Glob(filepath.Join(tmp, ".gonogo-doctor-*"))
	if err != nil || len(left) != 0 {
		t.Errorf("probe files left behind: %v (%v)", left, err)
	}
}

// The store is opened only when the command's own check of the directory
// passes, and agents are reaped only while doctor holds it.
func TestCheckDataOpensTheStoreOnlyWhenTheCommandAllows(t *testing.T) {
	dir := t.TempDir()
	db, err := storage.Open(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reaped := 0
	cfg := Config{DataDir: dir, ReapAgents: func(d string) {
		if d != dir {
			t.Errorf("reaped %s, want %s", d, dir)
		}
		reaped++
	}}

	if d := checkData(t.Context(), cfg); d.Store != "held" || reaped != 0 {
		t.Errorf("store open elsewhere: %+v, reaped %d; want held, none reaped", d, reaped)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	if d := checkData(t.Context(), cfg); d.Store != "ok" || d.StoreError != "" || reaped != 1 {
		t.Errorf("closed store: %+v, reaped %d; want ok, reaped once", d, reaped)
	}

	cfg.CheckDataDir = func(string) error { return errors.New("others may write it") }
	if d := checkData(t.Context(), cfg); d.Store != "error" || d.StoreError != "others may write it" || reaped != 1 {
		t.Errorf("refused directory: %+v, reaped %d; want the refusal as the store's error, nothing reaped", d, reaped)
	}
}

func TestCanCreateNamesTheFileInTheWay(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ok, why := canCreate(filepath.Join(file, "x", "y"))
	if ok || !strings.Contains(why, file+" is a file") {
		t.Errorf("canCreate through a file: %v %q", ok, why)
	}
}
