package storage

import (
	"context"
	"testing"
	"time"
)

// TestSignInsOutliveTheStoreAndAreTakenOnce: a kept entry is read back
// after the store is closed and opened again; taken, it is gone; past its
// expiry it reads as nothing and the next keep drops it.
func TestSignInsOutliveTheStoreAndAreTakenOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	db := openStore(t, dir, Options{NoSync: true})
	if err := db.KeepSignIn(ctx, "session:a", []byte(`{"user":"U1"}`), now.Add(time.Hour), now); err != nil {
		t.Fatal(err)
	}
	if err := db.KeepSignIn(ctx, "link:b", []byte(`{}`), now.Add(time.Minute), now); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openStore(t, dir, Options{NoSync: true})
	if v, err := db.SignIn(ctx, "session:a", now); err != nil || string(v) != `{"user":"U1"}` {
		t.Fatalf("after reopening: %q, %v", v, err)
	}
	if v, err := db.TakeSignIn(ctx, "link:b", now); err != nil || string(v) != `{}` {
		t.Fatalf("take: %q, %v", v, err)
	}
	if v, err := db.TakeSignIn(ctx, "link:b", now); err != nil || v != nil {
		t.Fatalf("taken twice: %q, %v", v, err)
	}
	later := now.Add(2 * time.Hour)
	if v, err := db.SignIn(ctx, "session:a", later); err != nil || v != nil {
		t.Fatalf("expired entry read: %q, %v", v, err)
	}
	if err := db.KeepSignIn(ctx, "session:c", []byte(`{}`), later.Add(time.Hour), later); err != nil {
		t.Fatal(err)
	}
	if v, err := db.SignIn(ctx, "session:a", now); err != nil || v != nil {
		t.Fatalf("an expired entry outlived the next keep: %q, %v", v, err)
	}
}
