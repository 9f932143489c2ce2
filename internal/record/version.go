package record

import (
	"errors"
	"fmt"
)

// Version is the version every record is written with, the store's own
// and Temporal's payloads included. A reader refuses a record from a newer
// gonogo rather than guess at its fields.
const Version = 1

// ErrNewer marks a record written by a gonogo newer than this one.
var ErrNewer = errors.New("written by a newer gonogo")

// ErrDamaged marks bytes that are not a gonogo record, or one damaged: a
// record that refers to what is not there.
var ErrDamaged = errors.New("not a gonogo database, or damaged")

// CheckVersion refuses a record whose version v this gonogo cannot read:
// none (0, or a number no gonogo writes) or a newer one (ErrNewer).
func CheckVersion(v int) error {
	switch {
	case v == 0:
		return errors.New("record has no version")
	case v < 0:
		return fmt.Errorf("record version %d: no gonogo writes it", v)
	case v > Version:
		return fmt.Errorf("record version %d: %w", v, ErrNewer)
	}
	return nil
}
