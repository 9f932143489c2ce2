package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/storage"
)

// A data directory, or its agents/ folder, that other users may write is
// refused (exit 2), saying why and how to fix it, before anything is
// opened or written there.
func TestDataDirectoryOthersMayWriteIsRefused(t *testing.T) {
	cases := []struct {
		name    string
		prepare func(t *testing.T, data string) string // returns the folder named
		want    string
	}{
		{"world-writable data directory", func(t *testing.T, data string) string {
			must(t, os.Chmod(data, 0o777))
			return data
		}, "may be written by other users (mode -rwxrwxrwx)"},
		{"group-writable data directory", func(t *testing.T, data string) string {
			must(t, os.Chmod(data, 0o770))
			return data
		}, "chmod go-w " + "%s"},
		{"world-writable agents folder", func(t *testing.T, data string) string {
			agents := filepath.Join(data, "agents")
			must(t, os.Mkdir(agents, 0o700))
			must(t, os.Chmod(agents, 0o777))
			return agents
		}, "the agents folder %s may be written by other users"},
		{"another user's data directory", func(t *testing.T, data string) string {
			if os.Geteuid() != 0 {
				t.Skip("giving a folder to another user needs root")
			}
			must(t, os.Chown(data, 65534, 65534))
			return data
		}, "belongs to another user (uid 65534"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vars := baseVars(t)
			data := vars["GONOGO_DATA_DIR"]
			db, err := storage.Open(data, storage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
			named := c.prepare(t, data)
			before := tree(t, data)
			want := strings.ReplaceAll(c.want, "%s", named)
			for _, args := range [][]string{{"run", "--dry-run", "--chain", "deliver-prd"}, {"runs"}} {
				res := gonogo(t, vars, "", args...)
				if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, named) {
					t.Errorf("gonogo %s: exit %d\n%s%s\nwant exit 2 and %q", strings.Join(args, " "), res.code, res.stdout, res.stderr, want)
				}
			}
			// doctor says so, and opens nothing there.
			if res := gonogo(t, vars, "", "doctor", "--dry-run", "--json"); !strings.Contains(res.stdout, `"store": "error"`) || !strings.Contains(res.stdout, want) {
				t.Errorf("doctor: exit %d\n%s%s\nwant the data directory refused", res.code, res.stdout, res.stderr)
			}
			if after := tree(t, data); !maps.Equal(after, before) {
				t.Error("a refused data directory was written")
			}
		})
	}
}

// A data directory of one's own, as gonogo makes it, is taken.
func TestOwnDataDirectoryIsTaken(t *testing.T) {
	vars := baseVars(t)
	vars["GONOGO_DATA_DIR"] = filepath.Join(vars["GONOGO_DATA_DIR"], "new")
	if res := gonogo(t, vars, "", "run", "--dry-run", "--chain", "deliver-prd"); res.code == terminal.ExitUsage {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := gonogo(t, vars, "", "runs"); res.code != terminal.ExitOK {
		t.Fatalf("runs: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
