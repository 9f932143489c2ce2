package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

var _ engine.Inbox = (*Inbox)(nil)

// InboxFileName is the inbox's file inside the data directory.
const InboxFileName = "inbox.db"

// Inbox keeps the requests a front end acknowledged (Slack's Socket Mode
// envelopes, as Slack sent them) until it has carried them out: each is
// recorded, fsynced, before it is acknowledged, and marked done after, so
// that one acknowledged just before a crash is carried out after it.
//
// It is a bbolt file of its own, <data>/inbox.db, beside the store's
// gonogo.db: bbolt commits one write transaction at a time per file, and
// in the store's file a request would wait behind the runs' commits (their
// fsyncs) before it could be acknowledged. Requests recorded at the same
// moment share one transaction and its fsync (a group commit).
//
// Layout: "meta" holds "schema" (8-byte big-endian, version 1); "inbox"
// maps an id (8-byte big-endian, the bucket's sequence) to an item (framed:
// an inboxRecord header, then the request). The file holds only requests
// not yet carried out, and is empty when gonogo is idle. Open the store
// (which takes the data directory's lock) before the inbox.
type Inbox struct {
	bolt  *bbolt.DB
	path  string
	now   func() time.Time
	group groupCommit
}

// inboxSchema is the inbox file's layout version.
const inboxSchema = 1

var bucketInbox = []byte("inbox")

// OpenInbox opens (creating if needed) the inbox in dataDir. Options'
// LockTimeout, Now and NoSync apply as they do to Open.
func OpenInbox(dataDir string, opt Options) (*Inbox, error) {
	bdb, path, now, err := openFile(dataDir, InboxFileName, "open the inbox", opt)
	if err != nil {
		return nil, err
	}
	in := &Inbox{bolt: bdb, path: path, now: now}
	if err := in.ready(); err != nil {
		_ = bdb.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return in, nil
}

// ready creates the layout of a new file, and refuses one from a newer
// gonogo or one that is not an inbox.
func (in *Inbox) ready() error {
	var have uint64
	err := in.view(func(tx *bbolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return nil
		}
		v := meta.Get(keySchema)
		if len(v) != 8 {
			return fmt.Errorf("schema version is %d bytes, want 8: %w", len(v), ErrDamaged)
		}
		have = binary.BigEndian.Uint64(v)
		return nil
	})
	switch {
	case err != nil:
		return err
	case have > inboxSchema:
		return fmt.Errorf("inbox schema version %d, this gonogo knows up to %d: %w; upgrade gonogo", have, inboxSchema, errNewerSchema)
	case have == inboxSchema:
		return in.view(func(tx *bbolt.Tx) error {
			if tx.Bucket(bucketInbox) == nil {
				return fmt.Errorf("bucket %s is missing: %w", bucketInbox, ErrDamaged)
			}
			return nil
		})
	}
	return in.update(func(tx *bbolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketInbox); err != nil {
			return err
		}
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		return meta.Put(keySchema, binary.BigEndian.AppendUint64(nil, inboxSchema))
	})
}

// Close releases the file and its lock.
func (in *Inbox) Close() error {
	if err := in.bolt.Close(); err != nil {
		return fmt.Errorf("close %s: %w", in.path, err)
	}
	return nil
}

// Record keeps a request and returns its id; once it returns the request
// is on disk. Ids grow, so Pending lists requests in the order they were
// recorded.
func (in *Inbox) Record(ctx context.Context, payload []byte) (uint64, error) {
	if err := live(ctx); err != nil {
		return 0, err
	}
	v, err := frame(inboxRecord{V: record.Version, Received: in.now()}, payload)
	if err != nil {
		return 0, fmt.Errorf("keep a request: %w", err)
	}
	var id uint64
	err = in.grouped(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketInbox)
		b.FillPercent = 1 // keys only grow
		var err error
		if id, err = b.NextSequence(); err != nil {
			return err
		}
		return b.Put(seqKey(id), v)
	})
	if err != nil {
		return 0, fmt.Errorf("keep a request in %s: %w", in.path, err)
	}
	return id, nil
}

// Pending lists the requests recorded and not yet marked done, oldest
// first. A request that cannot be read (damaged, or written by a newer
// gonogo) is listed with no payload, so the caller can log it and mark it
// done, and the others are still carried out.
func (in *Inbox) Pending(ctx context.Context) ([]engine.InboxItem, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	var out []engine.InboxItem
	err := in.view(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketInbox).ForEach(func(k, v []byte) error {
			var rec inboxRecord
			body, err := unframe(v, &rec)
			if err == nil {
				err = record.CheckVersion(rec.V)
			}
			switch {
			case len(k) != 8:
				return nil // not a request's key: nothing can name it
			case err != nil:
				out = append(out, engine.InboxItem{ID: seqNum(k)})
				return nil
			}
			out = append(out, engine.InboxItem{ID: seqNum(k), Payload: bytes.Clone(body), Received: rec.Received})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", in.path, err)
	}
	return out, nil
}

// Done forgets requests that were carried out, in one write. Marking one
// done twice is not an error.
func (in *Inbox) Done(ctx context.Context, ids ...uint64) error {
	if err := live(ctx); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	err := in.grouped(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketInbox)
		for _, id := range ids {
			if err := b.Delete(seqKey(id)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("mark inbox items %v done in %s: %w", ids, in.path, err)
	}
	return nil
}

// view and update run fn in a transaction and turn a panic (bbolt panics
// on some damaged pages) into an error.
func (in *Inbox) view(fn func(tx *bbolt.Tx) error) (err error) {
	defer catchDamage(&err)
	return in.bolt.View(fn)
}

func (in *Inbox) update(fn func(tx *bbolt.Tx) error) (err error) {
	defer catchDamage(&err)
	return in.bolt.Update(fn)
}

func catchDamage(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w (%v)", ErrDamaged, r)
	}
}

// groupCommit runs the writes handed to it at the same time in one
// transaction. The first writer to find no transaction under way commits
// every write waiting at that moment, its own included; writes that arrive
// meanwhile wait, and the first of them to wake commits the next group. A
// write never waits for more than the transaction before its own, and no
// goroutine is kept for it.
type groupCommit struct {
	mu      sync.Mutex
	cond    *sync.Cond
	busy    bool
	pending []*groupWrite
}

type groupWrite struct {
	fn   func(tx *bbolt.Tx) error
	err  error
	done bool
}

// grouped runs fn in a read-write transaction shared with the writes
// waiting alongside it, and returns once that transaction committed. fn may
// run twice: when another write of its group fails, every write of the
// group is run again in a transaction of its own, so that one failure does
// not fail the others.
func (in *Inbox) grouped(fn func(tx *bbolt.Tx) error) error {
	g := &in.group
	w := &groupWrite{fn: fn}
	g.mu.Lock()
	if g.cond == nil {
		g.cond = sync.NewCond(&g.mu)
	}
	g.pending = append(g.pending, w)
	for g.busy && !w.done {
		g.cond.Wait()
	}
	if w.done {
		g.mu.Unlock()
		return w.err
	}
	batch := g.pending
	g.pending, g.busy = nil, true
	g.mu.Unlock()

	in.commitGroup(batch)

	g.mu.Lock()
	for _, x := range batch {
		x.done = true
	}
	g.busy = false
	g.cond.Broadcast()
	g.mu.Unlock()
	return w.err
}

func (in *Inbox) commitGroup(batch []*groupWrite) {
	err := in.update(func(tx *bbolt.Tx) error {
		for _, w := range batch {
			if err := w.fn(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil || len(batch) == 1 {
		for _, w := range batch {
			w.err = err
		}
		return
	}
	for _, w := range batch {
		w.err = in.update(w.fn)
	}
}
