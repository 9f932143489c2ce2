package datadir

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/storage"
)

// TestCheckRefusesADirectoryOthersMayWrite: a data directory, or its
// agents folder, that other users may write is refused, saying how to
// make it private; one that is not there yet is not.
func TestCheckRefusesADirectoryOthersMayWrite(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	if err := Check(data); err != nil {
		t.Fatalf("not there yet: %v", err)
	}
	if err := os.MkdirAll(AgentsDir(data), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Check(data); err != nil {
		t.Fatalf("private: %v", err)
	}
	if err := os.Chmod(AgentsDir(data), 0o777); err != nil {
		t.Fatal(err)
	}
	err := Check(data)
	if err == nil || !strings.Contains(err.Error(), "the agents folder "+AgentsDir(data)+" may be written by other users") ||
		!strings.Contains(err.Error(), "chmod go-w "+AgentsDir(data)) {
		t.Fatalf("agents folder mode 777: %v", err)
	}
	if _, err := Open(context.Background(), data); err == nil {
		t.Fatal("Open took a data directory others may write")
	}
}

// TestOpenReaderCreatesNothing: reading a data directory without a store
// finds no runs and leaves no store behind; one with a store reads it.
func TestOpenReaderCreatesNothing(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	rd, err := OpenReader(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rd.(NoStore); !ok {
		t.Fatalf("no store: read through %T", rd)
	}
	if _, err := rd.Load(ctx, "20260101-000000-abc"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Load from no store: %v", err)
	}
	if _, err := os.Stat(filepath.Join(data, storage.FileName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reading created the store: %v", err)
	}
	db, err := Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err = OpenReader(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if _, ok := rd.(Store); !ok || ReadOnly(rd) {
		t.Fatalf("a store of this user's: read through %T, read-only %v", rd, ReadOnly(rd))
	}
}

// TestOpenWhileHeldNamesTheHolder: a store another gonogo holds and
// answers for on its local API is refused as a *HeldError naming it,
// still locked to errors.Is.
func TestOpenWhileHeldNamesTheHolder(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	data := t.TempDir()
	db, err := Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := engine.NewService(engine.ServiceConfig{Store: db, Log: log, Members: engine.LocalOperator})
	ln, err := localapi.Listen(data)
	if err != nil {
		t.Skipf("no local API here: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- localapi.Serve(ctx, ln, localapi.NewServer(db, svc, log, "run", "test", 0)) }()
	defer func() { cancel(); <-served }()

	_, err = Open(ctx, data)
	h, ok := errors.AsType[*HeldError](err)
	if !ok || !errors.Is(err, engine.ErrLocked) || h.Data != data || !strings.HasPrefix(h.Holder, "gonogo run (pid ") ||
		!strings.Contains(err.Error(), "holds "+data+" and carries out its runs") {
		t.Fatalf("second open: %v, want a *HeldError naming gonogo run", err)
	}
}
