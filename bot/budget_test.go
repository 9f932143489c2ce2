package bot

import (
	"testing"
	"time"
)

// An update turned away keeps its place: a newer update of the same
// priority does not take the token it waits for, even when the first one
// comes back a little late; one that never comes back stops holding the
// others after a while.
func TestUpdateBudgetKeepsTurns(t *testing.T) {
	u := newUpdateBudget(60, 1, time.Minute, time.Second) // one token, refilled one a second
	t0 := time.Unix(1_700_000_000, 0)
	if at := u.take("first", updateCheckpoint, t0); !at.IsZero() {
		t.Fatalf("the first update waited until %v", at)
	}
	turn := u.take("waiting", updateCheckpoint, t0)
	if turn.IsZero() {
		t.Fatal("an update past the budget was let through")
	}
	late := turn.Add(500 * time.Millisecond)
	if at := u.take("newer", updateCheckpoint, late); at.IsZero() {
		t.Fatal("a newer update took the token an older one was waiting for")
	}
	if at := u.take("waiting", updateCheckpoint, late); !at.IsZero() {
		t.Fatalf("the update that waited was turned away again, until %v", at)
	}
	// "newer" now waits; if it never comes back, it stops holding others.
	gone := late.Add(abandoned + 2*time.Second)
	if at := u.take("other", updateCheckpoint, gone); !at.IsZero() {
		t.Fatalf("an abandoned turn still holds the budget, until %v", at)
	}
}
