package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// A prepared file holds the body, synced and readable by all, beside its
// place; a folder it cannot be made in leaves nothing.
func TestPrepare(t *testing.T) {
	dir := t.TempDir()
	tmp, err := Prepare(dir, ".x.*.tmp", []byte("body"))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(tmp) != dir {
		t.Errorf("prepared in %s, want %s", filepath.Dir(tmp), dir)
	}
	got, err := os.ReadFile(tmp)
	if err != nil || string(got) != "body" {
		t.Fatalf("read %q, %v", got, err)
	}
	if info, err := os.Stat(tmp); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want 0644", info.Mode().Perm(), err)
	}
	if _, err := Prepare(filepath.Join(dir, "missing"), ".x.*.tmp", nil); err == nil {
		t.Error("a missing folder was not refused")
	}
}
