package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The read commands and decide create nothing: a --data that names no
// store (a typo, or nothing run yet) has no runs, and stays absent.
func TestReadCommandsCreateNoDataDirectory(t *testing.T) {
	data := filepath.Join(t.TempDir(), "typo")
	vars := map[string]string{"GONOGO_DATA_DIR": data}
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"runs"}, exitOK, "No runs in " + data},
		{[]string{"runs", "--json"}, exitOK, "[]"},
		{[]string{"show", "r-1"}, exitUsage, "no run r-1 in " + data},
		{[]string{"show", "r-1", "--artifact", "1"}, exitUsage, "no run r-1 in " + data},
		{[]string{"decide", "r-1", "approve"}, exitUsage, "no run r-1 in " + data},
	}
	for _, c := range cases {
		res := gonogo(t, vars, "", c.args...)
		if res.code != c.code || !strings.Contains(res.stdout+res.stderr, c.msg) {
			t.Errorf("gonogo %s: exit %d\n%s%s\nwant %d and %q", strings.Join(c.args, " "), res.code, res.stdout, res.stderr, c.code, c.msg)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Fatalf("gonogo %s created %s (stat: %v)", strings.Join(c.args, " "), data, err)
		}
	}
}
