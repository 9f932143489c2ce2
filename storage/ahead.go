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
// DB owns keeps one empty file and one empty folder ready in aheadDir, and
// a commit writes the body into the file and renames both into place. It
// starts with the first artifact file written, so a store that writes none
// makes none; Close stops it and removes what it made. A commit that finds
// nothing ready makes its own, as if there were no ahead.
type ahead struct {
	root *os.Root
	mu   sync.Mutex
	cond *sync.Cond // signalled when anything below changes
	// state goes from aheadIdle to aheadMaking (the first take) to
	// aheadHalted.
	state int
	file  spareFile // ready, or the zero spareFile
	dir   string    // ready, or ""
	// failed is set when making one failed; the maker tries again once
	// something is taken, not in a loop.
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
	name string // relative to the data directory
	f    *os.File
}

// clearAhead removes what a gonogo stopped before Close made ahead and did
// not use. The caller holds the store's write lock. What it cannot remove
// does no harm: nothing reads it.
func clearAhead(root *os.Root) { _ = root.RemoveAll(aheadDir) }

// needs reports whether the maker has something to make. The caller holds
// mu.
func (a *ahead) needs() bool {
	return a.state == aheadMaking && !a.failed && (a.file.f == nil || a.dir == "")
}

// run keeps one file and one folder ready until halt.
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
		file, dir := a.file.f == nil, a.dir == ""
		a.mu.Unlock()
		f, d, err := a.make(file, dir)
		a.mu.Lock()
		if f.f != nil {
			a.file = f
		}
		if d != "" {
			a.dir = d
		}
		a.failed = err != nil
	}
}

// make makes a file, a folder or both in aheadDir.
func (a *ahead) make(file, dir bool) (spareFile, string, error) {
	var f spareFile
	if err := a.root.Mkdir(aheadDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return f, "", err
	}
	if file {
		var err error
		f.name = path.Join(aheadDir, fmt.Sprintf("file-%016x", rand.Uint64()))
		if f.f, err = a.root.OpenFile(f.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
			return spareFile{}, "", err
		}
	}
	if !dir {
		return f, "", nil
	}
	name := path.Join(aheadDir, fmt.Sprintf("dir-%016x", rand.Uint64()))
	if err := a.root.Mkdir(name, 0o700); err != nil {
		return f, "", err
	}
	return f, name, nil
}

// take returns the file (or, with dir, the folder) made ahead, nil or ""
// when none is ready, and has the maker make the next. The first take
// starts the maker.
func (a *ahead) take(dir bool) (f spareFile, d string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state == aheadIdle {
		a.state = aheadMaking
		go a.run()
	}
	if a.state != aheadMaking {
		return spareFile{}, ""
	}
	if dir {
		d, a.dir = a.dir, ""
	} else {
		f, a.file = a.file, spareFile{}
	}
	a.failed = false
	a.cond.Broadcast()
	return f, d
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
// returns what was left there.
func (a *ahead) halt() []string {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	was := a.state
	a.state = aheadHalted
	a.cond.Broadcast()
	a.mu.Unlock()
	if was != aheadMaking {
		return nil
	}
	<-a.done
	var left []string
	if a.file.f != nil {
		left = append(left, a.file.name)
		_ = a.file.f.Close()
		a.file = spareFile{}
	}
	if a.dir != "" {
		left = append(left, a.dir)
		a.dir = ""
	}
	return append(left, aheadDir)
}

// close stops the maker and removes what it made.
func (a *ahead) close() {
	for _, name := range a.halt() {
		_ = a.root.Remove(name)
	}
}
