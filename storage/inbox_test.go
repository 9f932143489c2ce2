package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// openInbox opens the inbox in dir and, when the test ends, closes it and
// checks the file with bbolt's own checker.
func openInbox(t *testing.T, dir string, opt Options) *Inbox {
	t.Helper()
	in, err := OpenInbox(dir, opt)
	if err != nil {
		t.Fatalf("OpenInbox(%s): %v", dir, err)
	}
	t.Cleanup(func() {
		in.Close()
		checkFile(t, in.path)
	})
	return in
}

func TestInboxKeepsRequestsUntilDone(t *testing.T) {
	dir := t.TempDir()
	in := openInbox(t, dir, Options{})
	var ids []uint64
	bodies := [][]byte{[]byte(`{"envelope_id":"e1"}`), bytes.Repeat([]byte{0, 1, 0xff}, 500), []byte(`{"envelope_id":"e3"}`)}
	for _, b := range bodies {
		id, err := in.Record(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if ids[0] >= ids[1] || ids[1] >= ids[2] {
		t.Fatalf("ids %v: not growing", ids)
	}
	if err := in.Done(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	if err := in.Done(ctx, ids[1]); err != nil {
		t.Fatalf("second done: %v", err)
	}
	extra, err := in.Record(ctx, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Done(ctx, extra, ids[1], extra); err != nil {
		t.Fatalf("done of several at once: %v", err)
	}
	in.Close()

	in = openInbox(t, dir, Options{})
	items, err := in.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].ID != ids[0] || items[1].ID != ids[2] {
		t.Fatalf("inbox after reopen = %+v, want items %d and %d, oldest first", items, ids[0], ids[2])
	}
	for i, want := range [][]byte{bodies[0], bodies[2]} {
		if !bytes.Equal(items[i].Payload, want) || items[i].Received.IsZero() {
			t.Errorf("item %d = %q received %v, want %q with its time", items[i].ID, items[i].Payload, items[i].Received, want)
		}
	}
}

// The inbox is a file of its own: the store's file is not touched, and the
// inbox's lock keeps a second gonogo out.
func TestInboxIsAFileOfItsOwn(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	in := openInbox(t, dir, Options{})
	if _, err := in.Record(ctx, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if in.path == db.path {
		t.Fatalf("the inbox is the store's file %s", db.path)
	}
	_ = db.bolt.View(func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketInbox) != nil {
			t.Errorf("the store's file %s has an inbox bucket", db.path)
		}
		return nil
	})
	if _, err := OpenInbox(dir, Options{LockTimeout: 50 * time.Millisecond}); !errors.Is(err, engine.ErrLocked) {
		t.Errorf("a second OpenInbox: %v, want it refused as locked", err)
	}
}

func TestInboxRefusesAFileItCannotRead(t *testing.T) {
	for name, change := range map[string]func(tx *bbolt.Tx) error{
		"newer": func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketMeta).Put(keySchema, binary.BigEndian.AppendUint64(nil, inboxSchema+1))
		},
		"no inbox bucket": func(tx *bbolt.Tx) error { return tx.DeleteBucket(bucketInbox) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			in, err := OpenInbox(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := in.update(change); err != nil {
				t.Fatal(err)
			}
			in.Close()
			_, err = OpenInbox(dir, Options{})
			if err == nil || !errors.Is(err, errNewerSchema) && !errors.Is(err, ErrDamaged) {
				t.Fatalf("OpenInbox of a %s file: %v, want a refusal", name, err)
			}
		})
	}
}

// holdGroup makes the inbox's group commit look busy until release, so
// that the writes handed to it meanwhile queue up.
func holdGroup(in *Inbox) (queued func() int, release func()) {
	g := &in.group
	g.mu.Lock()
	g.cond = sync.NewCond(&g.mu)
	g.busy = true
	g.mu.Unlock()
	queued = func() int {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.pending)
	}
	release = func() {
		g.mu.Lock()
		g.busy = false
		g.cond.Broadcast()
		g.mu.Unlock()
	}
	return queued, release
}

func scratchPut(tx *bbolt.Tx, i int) error {
	b, err := tx.CreateBucketIfNotExists([]byte("scratch"))
	if err != nil {
		return err
	}
	return b.Put(seqKey(uint64(i+1)), []byte(fmt.Sprint(i)))
}

func scratchCount(t *testing.T, in *Inbox) int {
	t.Helper()
	n := 0
	err := in.view(func(tx *bbolt.Tx) error {
		if b := tx.Bucket([]byte("scratch")); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Writes handed in while a transaction is under way share the next one:
// with one commit held busy, ten writes queue up, and once it is released
// all ten run in a single transaction.
func TestGroupCommitSharesOneTransaction(t *testing.T) {
	in := openInbox(t, t.TempDir(), Options{})
	queued, release := holdGroup(in)
	const n = 10
	txs := make([]int, n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- in.grouped(func(tx *bbolt.Tx) error {
				txs[i] = tx.ID()
				return scratchPut(tx, i)
			})
		}()
	}
	for queued() < n {
		runtime.Gosched()
	}
	release()
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range txs {
		if id != txs[0] {
			t.Fatalf("write %d ran in transaction %d, write 0 in %d: not one group", i, id, txs[0])
		}
	}
	if got := scratchCount(t, in); got != n {
		t.Fatalf("%d writes landed, want %d", got, n)
	}
}

// A write that fails does not fail the writes grouped with it.
func TestGroupCommitIsolatesAFailingWrite(t *testing.T) {
	in := openInbox(t, t.TempDir(), Options{NoSync: true})
	queued, release := holdGroup(in)
	bad := errors.New("this write is refused")
	errs := make([]error, 5)
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() {
			errs[i] = in.grouped(func(tx *bbolt.Tx) error {
				if i == 2 {
					return bad
				}
				return scratchPut(tx, i)
			})
		})
	}
	for queued() < 5 {
		runtime.Gosched()
	}
	release()
	wg.Wait()
	for i, err := range errs {
		if (i == 2) != errors.Is(err, bad) {
			t.Errorf("write %d: err = %v", i, err)
		}
	}
	if got := scratchCount(t, in); got != 4 {
		t.Fatalf("%d writes landed, want the 4 that did not fail", got)
	}
}

// Many requests recorded at once are all kept, each under its own id.
func TestInboxConcurrentRecords(t *testing.T) {
	in := openInbox(t, t.TempDir(), Options{})
	const n = 64
	var wg sync.WaitGroup
	ids := make([]uint64, n)
	for i := range n {
		wg.Go(func() {
			id, err := in.Record(ctx, []byte(fmt.Sprintf(`{"envelope_id":"e%d"}`, i)))
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		})
	}
	wg.Wait()
	seen := map[uint64]bool{}
	for _, id := range ids {
		if id == 0 || seen[id] {
			t.Fatalf("ids %v: a zero or repeated id", ids)
		}
		seen[id] = true
	}
	items, err := in.Pending(ctx)
	if err != nil || len(items) != n {
		t.Fatalf("inbox holds %d items (%v), want %d", len(items), err, n)
	}
	for i := 1; i < len(items); i++ {
		if items[i].ID <= items[i-1].ID {
			t.Fatalf("inbox not oldest first: %d after %d", items[i].ID, items[i-1].ID)
		}
	}
}

// One request the inbox cannot read (here written by a newer gonogo) is
// listed without its payload, and the others are still carried out.
func TestInboxPendingGetsPastAnUnreadableRequest(t *testing.T) {
	in := openInbox(t, t.TempDir(), Options{})
	first, err := in.Record(ctx, []byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	newer, err := frame(inboxRecord{V: record.Version + 1}, []byte("from the future"))
	if err != nil {
		t.Fatal(err)
	}
	if err := in.bolt.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketInbox).Put(seqKey(first+100), newer) }); err != nil {
		t.Fatal(err)
	}
	last, err := in.Record(ctx, []byte("last"))
	if err != nil {
		t.Fatal(err)
	}
	items, err := in.Pending(ctx)
	if err != nil {
		t.Fatalf("one unreadable request stopped the others: %v", err)
	}
	if len(items) != 3 || string(items[0].Payload) != "first" || items[1].ID != last || string(items[1].Payload) != "last" ||
		items[2].ID != first+100 || items[2].Payload != nil {
		t.Fatalf("pending = %+v", items)
	}
	if err := in.Done(ctx, items[2].ID); err != nil {
		t.Fatal(err)
	}
}
