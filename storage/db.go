package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// FileName is the database file inside the data directory.
const FileName = "gonogo.db"

// Options tune Open. The zero value is right for gonogo itself.
type Options struct {
	// LockTimeout is how long Open waits for another gonogo to let go of
	// the file; 0 means one second.
	LockTimeout time.Duration
	// Now is the clock recovery stamps events with; nil means time.Now.
	Now func() time.Time
	// NoSync skips fsync, of the database and of artifact files. For tests
	// and benchmarks only: a crash can lose or damage what was committed.
	NoSync bool
	// ReadOnly opens the store for reading only, as someone who may read
	// it but not write it can (an archived copy, an auditor's account, a
	// read-only mount): a shared lock, so readers read side by side while
	// a writer waits, and nothing written, neither migration, pending
	// artifact files nor the recovery of steps left running. Writing
	// through it fails with ErrReadOnly.
	ReadOnly bool

	// openFile, when set, stands in for os.OpenFile when bbolt opens its
	// file: tests make it fail as a read-only file system would.
	openFile func(name string, flag int, perm os.FileMode) (*os.File, error)
}

// DB is gonogo's store: one bbolt file and the artifact files beside it.
// It is safe for concurrent use.
type DB struct {
	bolt      *bbolt.DB
	path      string
	files     dataFiles
	now       func() time.Time
	recovered []engine.RunID // runs whose running steps Open marked interrupted
	opening   bool           // errors name the file once, in Open's own message
	readOnly  bool

	// fileMu keeps file writes in commit order: a rename and the write that
	// takes its place must not interleave with another commit's. A commit
	// with files holds it from before its transaction until its files are
	// written, so a sync never forgets a run's mark between the two.
	fileMu sync.Mutex
	// behind is set while earlier file writes are still pending (they
	// failed); later writes then carry them out first, in commit order, so
	// an old body never lands on top of a newer one.
	behind atomic.Bool
	// written holds, by run, the file writes carried out and not yet
	// synced, in the order they were written: the run's mark (and their
	// records) stay until an fsync has made the files durable (see
	// syncFiles).
	written map[engine.RunID][]writtenFile
	// since bounds written from what due last counted, so that a commit
	// need not count it again until something could be due.
	since writtenBounds
	// filesErr is why pending file writes could not be done at Open.
	filesErr error
	pulse    pulse // see PulseFile

	// sums caches every run's summary once List has read them, kept up to
	// date by Commit, so listing runs decodes nothing after the first time.
	sumMu  sync.Mutex
	sums   map[engine.RunID]engine.RunSummary
	sumIDs []engine.RunID // newest first, as List returns them (engine.NewestFirst)
}

// FilesPending reports why artifact files left pending by an earlier
// failure could not be written when the store was opened; nil when every
// file is on disk.
func (db *DB) FilesPending() error { return db.filesErr }

var (
	_ engine.Store   = (*DB)(nil)
	_ engine.History = (*DB)(nil)
	_ engine.Pulse   = (*DB)(nil)
)

// ErrDamaged marks a file that is not a gonogo database or is damaged. It
// is record.ErrDamaged, so that a damaged record read from the store or
// from another gonogo is the same error.
var ErrDamaged = record.ErrDamaged

// ErrReadOnly is wrapped by a write to a store opened with
// Options.ReadOnly.
var ErrReadOnly = errors.New("the store is open read-only")

// ReadOnly reports whether the store was opened for reading only.
func (db *DB) ReadOnly() bool { return db.readOnly }

// Open opens (creating if needed) the store in dataDir and brings it to a
// state every reader can trust: the schema migrated, artifact files left
// pending by a crash written, and steps that were running when gonogo
// stopped marked interrupted.
func Open(dataDir string, opt Options) (*DB, error) {
	return open(dataDir, opt, migrations)
}

// OpenToRead opens the store in dataDir for someone who means to read it.
// When this user can write the store it opens it as Open does, brought up
// to date; when not (another user's store, a read-only mount), or when
// opening it for writing is refused, it opens it read-only
// (Options.ReadOnly), writing nothing. DB.ReadOnly says which.
func OpenToRead(dataDir string, opt Options) (*DB, error) {
	if !opt.ReadOnly && Writable(dataDir) {
		db, err := Open(dataDir, opt)
		if !writeRefused(err) {
			return db, err
		}
	}
	opt.ReadOnly = true
	return Open(dataDir, opt)
}

// Writable reports whether this user may write the store in dataDir (the
// directory, and gonogo.db when there is one) as the kernel decides for
// the effective user: not another user's store, nor one on a read-only
// mount, root included.
func Writable(dataDir string) bool {
	path := filepath.Join(dataDir, FileName)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return canWrite(dataDir)
	}
	return canWrite(dataDir) && canWrite(path)
}

// writeRefused reports whether err says the file may not be written.
func writeRefused(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// mapSize is the size bbolt maps a file at when it opens it. The file
// then grows inside its map: bbolt maps a file anew only when it outgrows
// the map (doubling it up to 1 GiB), and that copies onto the heap every
// value the writing transaction holds, so a step storing its artifact
// would hold it three times instead of twice. The map takes address
// space, not memory. On Windows bbolt makes the file as big as its map,
// and a 32-bit process has no gigabyte to spare: there the map grows with
// the file.
func mapSize() int {
	if runtime.GOOS == "windows" || strconv.IntSize < 64 {
		return 0
	}
	return 1 << 30
}

// openFile opens (creating it and dataDir if needed) one of the data
// directory's bbolt files with the options they share; what begins its
// errors.
func openFile(dataDir, name, what string, opt Options) (*bbolt.DB, string, func() time.Time, error) {
	if dataDir == "" {
		return nil, "", nil, errors.New(what + ": no data directory given")
	}
	if !opt.ReadOnly {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, "", nil, fmt.Errorf("%s: create data directory: %w", what, err)
		}
	}
	path := filepath.Join(dataDir, name)
	timeout := opt.LockTimeout
	if timeout <= 0 {
		timeout = time.Second
	}
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	bdb, err := openBolt(path, opt.openFile, &bbolt.Options{Timeout: timeout, NoSync: opt.NoSync,
		FreelistType: bbolt.FreelistMapType, ReadOnly: opt.ReadOnly, InitialMmapSize: mapSize()})
	if err != nil {
		return nil, "", nil, err
	}
	return bdb, path, now, nil
}

func open(dataDir string, opt Options, steps []migration) (*DB, error) {
	if err := checkNotReplacing(dataDir, opt.ReadOnly); err != nil {
		return nil, err
	}
	bdb, path, now, err := openFile(dataDir, FileName, "open store", opt)
	if err != nil {
		return nil, damagedAdvice(dataDir, err)
	}
	root, err := os.OpenRoot(dataDir)
	if err != nil {
		_ = bdb.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	db := &DB{bolt: bdb, path: path, files: dataFiles{root: root, noSync: opt.NoSync, syncs: new(atomic.Int64), dirs: map[string]bool{}}, now: now, opening: true,
		readOnly: opt.ReadOnly, written: map[engine.RunID][]writtenFile{}}
	if !opt.ReadOnly {
		db.files.ahead = newAhead(root)
	}
	if err := db.ready(steps); err != nil {
		_ = db.close()
		return nil, damagedAdvice(dataDir, err)
	}
	db.opening = false
	return db, nil
}

// openBolt opens the bbolt file, turning a lock held elsewhere, a file that
// is not a bbolt database, and a panic on a damaged one into errors that
// name the file.
func openBolt(path string, openFile func(string, int, os.FileMode) (*os.File, error), o *bbolt.Options) (db *bbolt.DB, err error) {
	if openFile == nil {
		openFile = os.OpenFile
	}
	// bbolt can panic on a damaged file after it has opened and locked it;
	// keep hold of the file so the lock can be let go.
	var file *os.File
	o.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := openFile(name, flag, perm)
		file = f
		return f, err
	}
	defer func() {
		if r := recover(); r != nil {
			if file != nil {
				unlock(file)
				_ = file.Close()
			}
			db, err = nil, fmt.Errorf("open %s: %w (%v)", path, ErrDamaged, r)
		}
	}()
	db, err = bbolt.Open(path, 0o600, o)
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, fmt.Errorf("%s is in use by another gonogo (pid unknown); stop it or use another --data directory: %w", path, engine.ErrLocked)
	case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrVersionMismatch),
		errors.Is(err, bolterrors.ErrChecksum), errors.Is(err, bolterrors.ErrInvalidMapping):
		return nil, fmt.Errorf("open %s: %w: %w", path, ErrDamaged, err)
	}
	return nil, fmt.Errorf("open %s: %w", path, err)
}

// ready runs, in order, what must happen before anything reads the store.
func (db *DB) ready(steps []migration) error {
	// Look before migrating: an update commits (and fsyncs) even when it
	// changes nothing.
	var have, want uint64
	err := db.view(func(tx *bbolt.Tx) (err error) {
		have, want, err = versions(tx, steps)
		return err
	})
	if err != nil {
		return db.openError(err)
	}
	migrating := have < want
	if migrating && db.readOnly && have >= readsAsIs {
		// A reader finds all it reads in this older layout (see
		// readsAsIs), and leaves the file as it is.
		migrating = false
	}
	if migrating && db.readOnly {
		return db.openError(fmt.Errorf("%w: its layout is older than this gonogo reads, and updating it needs write access: open it once with a gonogo that can write it", ErrReadOnly))
	}
	if migrating {
		if err := db.update(func(tx *bbolt.Tx) error { return migrate(tx, steps) }); err != nil {
			return db.openError(err)
		}
	}
	if err := db.view(checkBuckets); err != nil {
		return db.openError(err)
	}
	if db.readOnly {
		// Reading writes nothing: steps left running stay as recorded, and
		// artifact files stay as they are, until a gonogo that can write
		// the store opens it.
		return nil
	}
	clearAhead(db.files.root)
	if err := db.restoreFiles(); err != nil {
		// The changes stand; only files wait. They are written, in order,
		// before the next commit's own, or at the next open.
		if errors.Is(err, ErrDamaged) {
			return db.openError(err)
		}
		db.filesErr = err
	}
	if err := db.recoverRunning(); err != nil {
		return db.openError(err)
	}
	return nil
}

func (db *DB) openError(err error) error {
	return fmt.Errorf("open %s: %w", db.path, err)
}

// checkBuckets refuses a file that claims the current schema but lacks part
// of it, rather than fail later on a missing bucket.
func checkBuckets(tx *bbolt.Tx) error {
	for _, name := range layout {
		if tx.Bucket(name) == nil {
			return fmt.Errorf("bucket %s is missing: %w", name, ErrDamaged)
		}
	}
	return nil
}

// Close makes the artifact files written since the last sync durable,
// then releases the file and its lock.
func (db *DB) Close() error {
	var serr error
	db.fileMu.Lock()
	if len(db.written) > 0 {
		// When the sync fails, the marks stay and the next open writes
		// the files again.
		serr = db.syncFiles(db.unsynced())
		clear(db.written)
	}
	db.fileMu.Unlock()
	db.files.ahead.close()
	if err := db.close(); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("close %s: %w", db.path, serr)
	}
	return nil
}

// close releases the file and its lock, leaving the records of files not
// yet synced for the next open: what a crash leaves.
func (db *DB) close() error {
	db.files.ahead.halt()
	err := db.bolt.Close()
	if rerr := db.files.root.Close(); err == nil && rerr != nil && !errors.Is(rerr, os.ErrClosed) {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("close %s: %w", db.path, err)
	}
	return nil
}

// view and update run fn in a transaction and turn a panic (bbolt panics
// on some damaged pages) into an error naming the file.
func (db *DB) view(fn func(tx *bbolt.Tx) error) (err error) {
	defer db.catch(&err)
	return db.bolt.View(fn)
}

func (db *DB) update(fn func(tx *bbolt.Tx) error) (err error) {
	if err := db.mayWrite(); err != nil {
		return err
	}
	defer db.catch(&err)
	return db.bolt.Update(fn)
}

// mayWrite refuses a write to a store opened read-only.
func (db *DB) mayWrite() error {
	if db.readOnly {
		return fmt.Errorf("%s: %w", db.path, ErrReadOnly)
	}
	return nil
}

func (db *DB) catch(err *error) {
	if r := recover(); r != nil {
		if db.opening {
			*err = fmt.Errorf("%w (%v)", ErrDamaged, r)
		} else {
			*err = fmt.Errorf("%s: %w (%v)", db.path, ErrDamaged, r)
		}
	}
}

func live(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}
