package artifacts

import (
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gonogo/gonogo/engine"
)

func TestKey(t *testing.T) {
	const run = "20261127-015533-1a2b3c4d"
	tests := []struct {
		step, attempt, version int
		name, want             string
	}{
		{1, 1, 1, "deliver-prd", run + "/01-deliver-prd.attempt-1.md"},
		{1, 2, 1, "deliver-prd", run + "/01-deliver-prd.attempt-2.md"},
		{1, 2, 2, "deliver-prd", run + "/01-deliver-prd.attempt-2.v2.md"},
		{12, 3, 10, "x", run + "/12-x.attempt-3.v10.md"},
		{100, 1, 1, "x", run + "/100-x.attempt-1.md"},
	}
	for _, tt := range tests {
		got := Key(run, tt.step, tt.attempt, tt.version, tt.name)
		if got != tt.want {
			t.Errorf("Key(%d, %d, %d, %s) = %s, want %s", tt.step, tt.attempt, tt.version, tt.name, got, tt.want)
		}
		if err := CheckKey(got); err != nil {
			t.Errorf("Key made a key CheckKey refuses: %v", err)
		}
	}
}

// Version 1 of an attempt is named as the file a run writes for it today,
// with the run id in place of runs/<id>.
func TestKeyFollowsArtifactFile(t *testing.T) {
	id := engine.RunID("20261127-015533-1a2b3c4d")
	for step := 1; step <= 12; step += 11 {
		for attempt := 1; attempt <= 3; attempt++ {
			file := engine.ArtifactFile(id, step, "deliver-prd", attempt, false)
			if got, want := Key(string(id), step, attempt, 1, "deliver-prd"), strings.TrimPrefix(file, "runs/"); got != want {
				t.Errorf("Key = %s, want %s (from %s)", got, want, file)
			}
		}
	}
}

// Versions never share a key, and no key of one attempt is another's.
func TestKeyDistinct(t *testing.T) {
	seen := map[string]string{}
	for step := 1; step <= 11; step++ {
		for attempt := 1; attempt <= 11; attempt++ {
			for version := 1; version <= 11; version++ {
				k := Key("r", step, attempt, version, "s")
				what := strconv.Itoa(step) + "/" + strconv.Itoa(attempt) + "/" + strconv.Itoa(version)
				if other, ok := seen[k]; ok {
					t.Fatalf("%s and %s share the key %s", other, what, k)
				}
				seen[k] = what
			}
		}
	}
}

func TestKeyWithUnsafeParts(t *testing.T) {
	for _, k := range []string{
		Key("../other", 1, 1, 1, "x"),
		Key("", 1, 1, 1, "x"),
		Key("/abs", 1, 1, 1, "x"),
		Key("run", 1, 1, 1, "a/../../b"),
		Key(`run\x`, 1, 1, 1, "x"),
	} {
		if err := CheckKey(k); err == nil {
			t.Errorf("CheckKey(%q) accepted it", k)
		}
	}
}

func TestCheckKey(t *testing.T) {
	for _, k := range []string{
		"a",
		"run/01-x.attempt-1.md",
		"teams/gonogo/run/01-x.attempt-1.v2.md",
		"run/01-écrire.attempt-1.md",
		"run/" + strings.Repeat("a", 255),
		strings.Repeat("a/", (MaxKeyLen-1)/2) + "a",
	} {
		if err := CheckKey(k); err != nil {
			t.Errorf("CheckKey(%q) = %v, want nil", k, err)
		}
	}
	for _, k := range badKeys {
		err := CheckKey(k)
		if err == nil {
			t.Errorf("CheckKey(%q) accepted it", k)
			continue
		}
		if !strings.Contains(err.Error(), strconv.Quote(k)) {
			t.Errorf("CheckKey(%q) = %v: does not name the key", k, err)
		}
	}
}

// A key CheckKey accepts is a clean, local, forward-slash path within the
// length limit, so no store can be led outside its directory or prefix.
func FuzzCheckKey(f *testing.F) {
	for _, k := range append([]string{"run/01-x.attempt-1.md", "a", "a/b/c"}, badKeys...) {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, k string) {
		if CheckKey(k) != nil {
			return
		}
		switch {
		case len(k) > MaxKeyLen:
			t.Fatalf("accepted %d bytes", len(k))
		case path.Clean(k) != k || strings.HasPrefix(k, "/"):
			t.Fatalf("accepted %q, not clean and relative", k)
		case !filepath.IsLocal(filepath.FromSlash(k)):
			t.Fatalf("accepted %q, not local", k)
		case strings.Contains(k, `\`) || strings.Contains(k, "..") || !utf8.ValidString(k):
			t.Fatalf("accepted %q", k)
		}
	})
}
