package storage

import (
	"os"
	"strings"
	"sync"
	"time"
)

// PulseFile is where the store keeps its pulse (engine.Pulse) inside the
// data directory: the last time the gonogo holding the store said it was
// alive while it ran steps, as one line of RFC 3339 text in UTC.
//
// The pulse is a hint, not a record: it is written in place and never
// fsynced, so keeping it costs a write to the page cache every
// engine.PulseEvery while steps run, not a disk flush. A gonogo that is
// killed leaves its last pulse behind (the kernel still writes the page);
// a power cut may lose the latest ones, and then an earlier pulse, or the
// run's own record, stands. Open reads it before it recovers: it is the
// last sign of life engine.Recover gives the attempts it interrupts. Only
// the holder of the store's lock writes it, and the next holder reads it
// before anything else, so a pulse is always of the gonogo that ran the
// steps Open finds running (or older, which Recover passes over).
const PulseFile = "gonogo.alive"

// pulseLayout has a fixed width, so a pulse overwrites the one before it
// whole.
const pulseLayout = "2006-01-02T15:04:05.000000000Z07:00"

// pulse is the time the store last wrote to PulseFile.
type pulse struct {
	mu   sync.Mutex
	last time.Time
}

// Alive writes at to PulseFile, unless a later time is there already. A
// pulse that cannot be written is let go: the next one may be, and
// without any the runs' own record still bounds when a step was lost.
func (db *DB) Alive(at time.Time) {
	db.pulse.mu.Lock()
	defer db.pulse.mu.Unlock()
	if !at.After(db.pulse.last) || db.files.root == nil {
		return
	}
	f, err := db.files.root.OpenFile(PulseFile, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(at.UTC().Format(pulseLayout)+"\n"), 0); err == nil {
		db.pulse.last = at
	}
}

// lastPulse reads PulseFile; zero when there is none, or it is not a time.
func (db *DB) lastPulse() time.Time {
	if db.files.root == nil {
		return time.Time{}
	}
	b, err := db.files.root.ReadFile(PulseFile)
	if err != nil {
		return time.Time{}
	}
	at, err := time.Parse(pulseLayout, strings.TrimSpace(string(b)))
	if err != nil {
		return time.Time{}
	}
	return at
}
