package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"sync"
)

// aheadDir holds, inside the data directory, the empty files and folders
// made ahead for the next artifact file and the next run's folder.
const aheadDir = ".ahead"

// ahead makes the inodes of artifact files before they are needed. Making
// a file or a folder is, on a busy file system, the dearest step of
// writing an artifact file (it can cost as much as the transaction's
// fsync), while renaming one into place costs little: so a goroutine the
// DB owns keeps ready in aheadDir one empty file, for a run's folder that
// exists, and one empty folder holding an empty file, for a run's first
// file; a commit writes the body into the file while its transaction
// commits, and renames it (or its folder) into place once it has (see
// staged). The maker starts after the first artifact file written, so a
// store that writes none makes none, and makes the next ones once a
// commit's files are written (refill), not while they are; Close stops it
// and removes what it made. A commit that finds nothing ready makes its
// own, as if there were no ahead.
type ahead struct {
	root *os.Root
	mu   sync.Mutex
	cond *sync.Cond // signalled when anything below changes
	// state goes from aheadIdle to aheadMaking (the first refill) to
	// aheadHalted.
	state int
	file  spareFile // ready, or the zero spareFile
	dir   spareDir  // ready, or the zero spareDir
	// failed is set when making one failed; the maker tries again at the
	// next refill, not in a loop.
	failed bool
	done   chan struct{} // closed when the maker has stopped
}

const (
	aheadIdle = iota
	aheadMaking
	aheadHalted
)

func newAhead(root *os.Root) *ahead {
	a := &ahead{root: root, done: make(chan struct{})}
	a.cond = sync.NewCond(&a.mu)
	return a
}

// spareFile is an empty file made ahead, open for writing.
type spareFile struct {
	name string // relative to the data directory, or to its spare folder
	f    *os.File
}

// spareDir is an empty folder made ahead, holding an empty file: once the
// folder is in place, naming the file costs one rename inside it.
type spareDir struct {
	name string   // relative to the data directory
	root *os.Root // the folder, wherever it is moved
	file spareFile
}

// spareName is the spare file's name inside a spare folder until a body
// is written into it and it is named for its place (see stageInFolder):
// hidden, and a temp file's, should it ever be seen.
const spareName = ".spare.tmp"

// clearAhead removes what a gonogo stopped before Close made ahead and did
// not use. The caller holds the store's write lock. What it cannot remove
// does no harm: nothing reads it.
func clearAhead(root *os.Root) { _ = root.RemoveAll(aheadDir) }

// needs reports whether the maker has something to make. The caller holds
// mu.
func (a *ahead) needs() bool {
	return a.state == aheadMaking && !a.failed && (a.file.f == nil || a.dir.root == nil)
}

// run keeps one of each ready until halt.
func (a *ahead) run() {
	defer close(a.done)
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.state == aheadMaking {
		if !a.needs() {
			a.cond.Broadcast()
			a.cond.Wait()
			continue
		}
		file, dir := a.file.f == nil, a.dir.root == nil
		a.mu.Unlock()
		f, d, err := a.make(file, dir)
		a.mu.Lock()
		if f.f != nil {
			a.file = f
		}
		if d.root != nil {
			a.dir = d
		}
		a.failed = err != nil
	}
}

// make makes a file, a folder or both in aheadDir.
func (a *ahead) make(file, dir bool) (f spareFile, d spareDir, err error) {
	if err := a.root.Mkdir(aheadDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return f, d, err
	}
	if file {
		f.name = path.Join(aheadDir, fmt.Sprintf("file-%016x", rand.Uint64()))
		if f.f, err = a.root.OpenFile(f.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
			return spareFile{}, d, err
		}
	}
	if !dir {
		return f, d, nil
	}
	d.name = path.Join(aheadDir, fmt.Sprintf("dir-%016x", rand.Uint64()))
	if err := a.root.Mkdir(d.name, 0o700); err != nil {
		return f, spareDir{}, err
	}
	if d.root, err = a.root.OpenRoot(d.name); err != nil {
		return f, spareDir{}, err
	}
	d.file.name = spareName
	if d.file.f, err = d.root.OpenFile(spareName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
		_ = d.root.Close()
		return f, spareDir{}, err
	}
	return f, d, nil
}

// takeFile returns the file made ahead, if one is ready; its name is
// relative to the data directory.
func (a *ahead) takeFile() (spareFile, bool) {
	if a == nil {
		return spareFile{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	f := a.file
	a.file = spareFile{}
	return f, f.f != nil
}

// takeDir returns the folder made ahead, if one is ready.
func (a *ahead) takeDir() (spareDir, bool) {
	if a == nil {
		return spareDir{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	d := a.dir
	a.dir = spareDir{}
	return d, d.root != nil
}

// refill has the maker make what was taken, starting it the first time.
func (a *ahead) refill() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state == aheadIdle {
		a.state = aheadMaking
		go a.run()
	}
	a.failed = false
	a.cond.Broadcast()
}

// settle waits until the maker has made what was taken, or given up.
func (a *ahead) settle() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.needs() {
		a.cond.Wait()
	}
}

// halt stops the maker and lets go of what it made, leaving it on disk as
// a gonogo stopped before Close would: the next Open removes it. It
// reports whether anything was made.
func (a *ahead) halt() bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	was := a.state
	a.state = aheadHalted
	a.cond.Broadcast()
	a.mu.Unlock()
	if was != aheadMaking {
		return false
	}
	<-a.done
	if a.file.f != nil {
		_ = a.file.f.Close()
		a.file = spareFile{}
	}
	a.dir.close()
	a.dir = spareDir{}
	return true
}

// close stops the maker and removes what it made.
func (a *ahead) close() {
	if a.halt() {
		clearAhead(a.root)
	}
}

// close lets go of a spare folder's handles.
func (d spareDir) close() {
	if d.file.f != nil {
		_ = d.file.f.Close()
	}
	if d.root != nil {
		_ = d.root.Close()
	}
}
