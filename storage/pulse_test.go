package storage

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The pulse keeps the latest time it was told, to the nanosecond, in a
// file only its owner may read; an earlier time does not overwrite a
// later one, and a file that holds no time reads as no pulse.
func TestPulseKeepsTheLatestTime(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	if got := db.lastPulse(); !got.IsZero() {
		t.Fatalf("pulse of a new store = %v, want none", got)
	}
	at := time.Date(2026, 5, 1, 12, 30, 0, 123456789, time.FixedZone("CEST", 2*3600))
	db.Alive(at)
	db.Alive(at.Add(-time.Minute))
	if got := db.lastPulse(); !got.Equal(at) {
		t.Fatalf("pulse = %v, want %v", got, at)
	}
	db.Alive(at.Add(time.Second))
	if got := db.lastPulse(); !got.Equal(at.Add(time.Second)) {
		t.Fatalf("pulse = %v, want %v", got, at.Add(time.Second))
	}
	fi, err := os.Stat(filepath.Join(dir, PulseFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("pulse file: %v, %v; want mode 0600", fi, err)
	}
	if err := os.WriteFile(filepath.Join(dir, PulseFile), []byte("not a time\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := db.lastPulse(); !got.IsZero() {
		t.Fatalf("pulse of a file that holds no time = %v, want none", got)
	}
}
