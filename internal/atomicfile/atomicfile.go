// Package atomicfile writes a file whole or not at all: the body goes to a
// synced temporary file beside its place, which the caller then renames
// (replace) or links (create only) into place. It owns only that step and
// imports only the standard library.
//
//	tmp, err := atomicfile.Prepare(dir, ".trail.md.*.tmp", body)
//	if err == nil {
//		defer os.Remove(tmp)
//		err = os.Rename(tmp, path)
//	}
package atomicfile

import "os"

// Prepare writes body to a new file in dir named by pattern (as
// os.CreateTemp names it), syncs it, makes it readable by all (0644) and
// returns its path. The caller removes it once it is renamed or linked
// into place, or when that failed; on error nothing is left behind.
func Prepare(dir, pattern string, body []byte) (string, error) {
	tmp, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	if _, err = tmp.Write(body); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}
