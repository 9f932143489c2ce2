package artifacts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode"
	"unicode/utf8"
)

var (
	// ErrNotFound is wrapped by Get for a key that holds nothing. It is also
	// fs.ErrNotExist, so code written against files needs no change.
	ErrNotFound = fmt.Errorf("artifact not found: %w", fs.ErrNotExist)
	// ErrExists is wrapped by Put for a key that already holds other bytes.
	// It is also fs.ErrExist.
	ErrExists = fmt.Errorf("artifact already stored with different contents: %w", fs.ErrExist)
)

// Store is what Open returns: Dir or S3. A consumer declares its own
// interface with the methods it calls.
type Store interface {
	Put(ctx context.Context, key string, body []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
}

// Limits on a key, well inside what file systems (255 bytes a name) and S3
// (1024 bytes an object name, prefix included) accept.
const (
	MaxKeyLen     = 512
	maxSegmentLen = 255
)

// Key is the key of one version of one attempt's artifact in a run. It
// follows the file names a run writes under the data directory
// (runs/<run>/NN-<skill>.attempt-K.md, see engine.ArtifactFile), prefixed by
// the run id instead of runs/, and always names the attempt, since a key
// never moves to a later attempt as the step's latest file does. Version 1,
// the agent's own artifact, has exactly that name; a later version (an edit
// by a person) adds .vN before the extension:
//
//	Key("20261127-015533-1a2b3c4d", 1, 2, 1, "deliver-prd") = "20261127-015533-1a2b3c4d/01-deliver-prd.attempt-2.md"
//	Key("20261127-015533-1a2b3c4d", 1, 2, 3, "deliver-prd") = "20261127-015533-1a2b3c4d/01-deliver-prd.attempt-2.v3.md"
//
// name is the step's skill. Step, attempt and version count from 1. Key
// does not check its parts (run ids and skill names are checked where they
// are made); parts that would make an unsafe key, such as a run id with a
// slash or "..", make a key that Put and Get refuse.
func Key(run string, step, attempt, version int, name string) string {
	if version == 1 {
		return fmt.Sprintf("%s/%02d-%s.attempt-%d.md", run, step, name, attempt)
	}
	return fmt.Sprintf("%s/%02d-%s.attempt-%d.v%d.md", run, step, name, attempt, version)
}

// CheckKey reports why key cannot name an artifact, or nil. A key is
// relative, made of slash-separated segments, each non-empty and not
// starting with a dot (which keeps Dir's temporary files apart), without
// "..", backslashes or control characters, in valid UTF-8, and
// at most MaxKeyLen bytes long (a segment at most 255). Every store checks
// keys with it before any I/O, so a key means the same thing in every
// store.
func CheckKey(key string) error {
	if err := checkPath(key, MaxKeyLen); err != nil {
		return fmt.Errorf("artifact key %q: %w", key, err)
	}
	return nil
}

// checkPath applies the key rules to a key or an S3 prefix.
func checkPath(p string, max int) error {
	switch {
	case p == "":
		return errors.New("empty")
	case len(p) > max:
		return fmt.Errorf("%d bytes long, over the limit of %d", len(p), max)
	case !utf8.ValidString(p):
		return errors.New("not valid UTF-8")
	case strings.ContainsFunc(p, unicode.IsControl):
		return errors.New("contains a control character")
	case strings.Contains(p, `\`):
		return errors.New("contains a backslash: use forward slashes")
	case strings.HasPrefix(p, "/"):
		return errors.New("absolute: keys are relative to the store")
	case strings.Contains(p, ".."):
		return errors.New(`contains ".."`)
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch {
		case seg == "":
			return errors.New("has an empty segment (a doubled or trailing slash)")
		case strings.HasPrefix(seg, "."):
			return fmt.Errorf("segment %q starts with a dot", seg)
		case len(seg) > maxSegmentLen:
			return fmt.Errorf("a segment is %d bytes long, over the limit of %d", len(seg), maxSegmentLen)
		}
	}
	return nil
}
