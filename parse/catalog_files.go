package parse

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// catalogBounds are the folders a skill's (or a leaf agent's) files may
// lead to through symbolic links: real paths, every link in them resolved.
// For a skill they are its skills folder and the skill's own folder, which
// may lie elsewhere (an installer's link into a shared checkout); for a
// leaf agent, its agents folder. A file is read only after its real path is
// found inside one of them, and then through an os.Root of that folder, so
// a link swapped in after the check cannot lead out either.
type catalogBounds struct {
	roots []string
	what  string // names the folders in messages: "the skills folder or the skill's folder"
}

// newCatalogBounds resolves folders (a folder that cannot be resolved
// bounds nothing).
func newCatalogBounds(what string, folders ...string) catalogBounds {
	b := catalogBounds{what: what}
	for _, f := range folders {
		if abs, err := filepath.Abs(f); err == nil {
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				b.roots = append(b.roots, real)
			}
		}
	}
	return b
}

// catalogEscapeError is a file whose symbolic links lead outside the
// folders it may be read from.
type catalogEscapeError struct {
	path, real, what string
}

func (e *catalogEscapeError) Error() string {
	return fmt.Sprintf("%s leads through a symbolic link to %s, outside %s; gonogo reads no skill or agent file through a link that leaves them", e.path, e.real, e.what)
}

// resolve returns the real path of path and the bound it lies in. A file
// that does not exist is an error wrapping fs.ErrNotExist; one that leads
// outside every bound is a *catalogEscapeError.
func (b catalogBounds) resolve(path string) (real, root string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	real, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return "", "", err
	}
	for _, r := range b.roots {
		if catalogWithin(r, real) {
			return real, r, nil
		}
	}
	return "", "", &catalogEscapeError{path: path, real: real, what: b.what}
}

// catalogWithin reports whether path is root or beneath it (both real and
// absolute).
func catalogWithin(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// readFile reads path if it stays inside the bounds.
func (b catalogBounds) readFile(path string) ([]byte, error) {
	real, root, err := b.resolve(path)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, real)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadFile(rel)
}

// catalogMaxReferences is how many entries of a skill's references/ folder
// are checked before the skill is refused: a skill shows its agent a
// handful of references, and checking costs a few system calls each.
const catalogMaxReferences = 10000

// checkTree reports the first file or folder under dir (dir included) that
// leads outside the bounds, following the links that stay inside: the
// agent may read any file there. A missing dir is no problem.
func (b catalogBounds) checkTree(dir string) error {
	t := &catalogTreeCheck{bounds: b, root: dir, seen: map[string]bool{}}
	return t.walk(dir)
}

// catalogTreeCheck is one walk of checkTree: the folders already walked
// (links can loop back) and the entries counted so far.
type catalogTreeCheck struct {
	bounds  catalogBounds
	root    string
	seen    map[string]bool
	entries int
}

func (t *catalogTreeCheck) walk(path string) error {
	real, err := t.resolve(path)
	if err != nil || real == "" {
		return err
	}
	info, err := os.Stat(real)
	if err != nil || !info.IsDir() || t.seen[real] {
		return nil
	}
	t.seen[real] = true
	return t.walkDir(path, real)
}

// walkDir walks the entries of the folder at path, real once its links are
// followed.
func (t *catalogTreeCheck) walkDir(path, real string) error {
	list, err := os.ReadDir(real)
	if err != nil {
		return fmt.Errorf("%s: %w", path, catalogBareError(err))
	}
	for _, e := range list {
		if t.entries++; t.entries > catalogMaxReferences {
			return fmt.Errorf("%s holds more than %d entries; gonogo checks each file a skill shows its agent", t.root, catalogMaxReferences)
		}
		if err := t.walk(filepath.Join(path, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// resolve follows the links of path within the bounds; it returns "" for a
// dangling link, which shows nothing.
func (t *catalogTreeCheck) resolve(path string) (string, error) {
	real, _, err := t.bounds.resolve(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil && !errors.As(err, new(*catalogEscapeError)):
		return "", fmt.Errorf("%s: %w", path, catalogBareError(err))
	case err != nil:
		return "", err
	}
	return real, nil
}
