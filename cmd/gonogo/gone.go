package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// artifactGone reports whether an attempt's artifact file (file, relative
// to the data directory, as engine.Attempt.File) is gone from disk:
// deleted or moved since gonogo wrote it. The store keeps the bytes, and
// show, its JSON and export say the file is gone rather than name a path
// that leads nowhere. A file gonogo cannot look at is not called gone.
func artifactGone(data, file string) bool {
	if file == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(data, filepath.FromSlash(file)))
	return errors.Is(err, fs.ErrNotExist)
}
