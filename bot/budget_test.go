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

// A person's decision takes the bucket's last token, as a checkpoint does,
// where a change of state leaves one and a header's refresh two; but it
// waits behind a checkpoint turned away before it, and no checkpoint waits
// behind it.
func TestUpdateBudgetPutsDecisionsAfterCheckpoints(t *testing.T) {
	u := newUpdateBudget(12, 3, time.Minute, time.Second) // three tokens, refilled one every 6.67 s
	t0 := time.Unix(1_700_000_000, 0)
	for i, m := range []string{"a", "b"} {
		if at := u.take(m, updateCheckpoint, t0); !at.IsZero() {
			t.Fatalf("checkpoint %d waited until %v", i, at)
		}
	}
	if at := u.take("state", updateState, t0); at.IsZero() {
		t.Fatal("a change of state took the last token")
	}
	if at := u.take("header", updateMinor, t0); at.IsZero() {
		t.Fatal("a header refresh took the last token")
	}
	if at := u.take("decided", updateDecision, t0); !at.IsZero() {
		t.Fatalf("a decision did not take the last token: it waits until %v", at)
	}
	// The bucket is empty: a checkpoint turned away keeps its turn ahead of
	// a decision that comes after it.
	if at := u.take("waiting", updateCheckpoint, t0); at.IsZero() {
		t.Fatal("a checkpoint past the budget was let through")
	}
	later := t0.Add(7 * time.Second) // one token back
	if at := u.take("decided-later", updateDecision, later); at.IsZero() {
		t.Fatal("a decision took the token a checkpoint turned away before it waits for")
	}
	if at := u.take("waiting", updateCheckpoint, later); !at.IsZero() {
		t.Fatalf("the checkpoint waited for a decision, until %v", at)
	}
}

// A message turned away whose update is no longer needed (a click's
// response_url showed it, or it already shows what it should) gives up its
// turn at once: it does not hold every other update until it is abandoned.
func TestUpdateBudgetSettledGivesUpItsTurn(t *testing.T) {
	u := newUpdateBudget(60, 1, time.Minute, time.Second) // one token, refilled one a second
	t0 := time.Unix(1_700_000_000, 0)
	if at := u.take("first", updateCheckpoint, t0); !at.IsZero() {
		t.Fatalf("the first update waited until %v", at)
	}
	if at := u.take("clicked", updateCheckpoint, t0); at.IsZero() {
		t.Fatal("an update past the budget was let through")
	}
	u.settled("clicked")
	// Long after the token came back, well before an abandoned turn is
	// let go of.
	later := t0.Add(5 * time.Second)
	if at := u.take("header", updateMinor, later); !at.IsZero() {
		t.Fatalf("a settled message still holds the budget, until %v", at)
	}
}

// Without turns (a bot on a cluster, whose next sync of a run may be made
// by another replica), a message turned away holds no place: once a token
// is back, any update takes it.
func TestUpdateBudgetWithoutTurns(t *testing.T) {
	u := newUpdateBudget(60, 1, time.Minute, time.Second) // one token, refilled one a second
	u.keepTurns = false
	t0 := time.Unix(1_700_000_000, 0)
	if at := u.take("first", updateCheckpoint, t0); !at.IsZero() {
		t.Fatalf("the first update waited until %v", at)
	}
	if at := u.take("elsewhere-next", updateCheckpoint, t0); at.IsZero() {
		t.Fatal("an update past the budget was let through")
	}
	if at := u.take("header", updateMinor, t0.Add(5*time.Second)); !at.IsZero() {
		t.Fatalf("a message turned away held the budget, until %v", at)
	}
}
