package runner

import (
	"os"
	"path/filepath"
	"testing"
)

func TestNotSatisfied(t *testing.T) {
	for _, c := range []struct {
		version, declared string
		older             bool
		err               bool
	}{
		{"v20.20.2", ">=22.0.0", true, false},
		{"v22.0.0", ">=22.0.0", false, false},
		{"v24.11.1", ">=22", false, false},
		{"v18.19.0", ">=16", false, false},
		{"v20.20.2", ">=18 <21", false, false},
		{"v22.1.0", ">=18 <21", true, false},
		{"v20.9.0", "^18.17 || >=20.5", false, false},
		{"v19.0.0", "^18.17 || >=20.5", true, false},
		{"v22.4.0", "22.x", false, false},
		{"v23.0.0", "~22.4", true, false},
		{"v20.20.2", "latest", false, true},
		{"not a version", ">=22", false, true},
	} {
		older, err := notSatisfied(c.version, c.declared)
		if older != c.older || (err != nil) != c.err {
			t.Errorf("node %s against %q: older %v, err %v; want %v, error %v", c.version, c.declared, older, err, c.older, c.err)
		}
	}
}

// npmInstall lays out an npm package as npm installs one: the package's
// bin file and the link to it in node_modules/.bin, returned.
func npmInstall(t *testing.T, engines, bin, body string) string {
	t.Helper()
	prefix := t.TempDir()
	pkg := filepath.Join(prefix, "node_modules", "@acme", "agent-cli")
	if err := os.MkdirAll(filepath.Join(pkg, filepath.Dir(bin)), 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `{"name": "@acme/agent-cli", "bin": {"agent": "` + bin + `"}, "engines": {"node": "` + engines + `"}}`
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, bin), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	dotBin := filepath.Join(prefix, "node_modules", ".bin")
	if err := os.MkdirAll(dotBin, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dotBin, "agent")
	if err := os.Symlink(filepath.Join("..", "@acme", "agent-cli", bin), link); err != nil {
		t.Fatal(err)
	}
	return link
}

// fakeNode puts on PATH a node that says it is version.
func fakeNode(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "node")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+version+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return p
}

func TestCheckNodeReadsWhatThePackageDeclares(t *testing.T) {
	script := npmInstall(t, ">=22.0.0", "bin/agent.js", "#!/usr/bin/env node\nconsole.log('hi')\n")
	node := fakeNode(t, "v20.20.2")
	n, ok := CheckNode(t.Context(), script, VersionTimeout)
	if !ok || n.Package != "@acme/agent-cli" || n.Declares != ">=22.0.0" || n.NodePath != node || n.Node != "v20.20.2" || !n.Older || n.Why != "" {
		t.Fatalf("CheckNode = %+v, %v; want @acme/agent-cli declaring >=22.0.0, node v20.20.2 older", n, ok)
	}
	fakeNode(t, "v24.11.1")
	if n, _ := CheckNode(t.Context(), script, VersionTimeout); n.Older || n.Node != "v24.11.1" {
		t.Errorf("with node v24.11.1: %+v, want not older", n)
	}
	// A CLI shipped as a binary whose package still declares a Node is
	// held to the node on PATH.
	binary := npmInstall(t, ">=26", "bin/agent.exe", "\x7fELF not a script")
	if n, ok := CheckNode(t.Context(), binary, VersionTimeout); !ok || !n.Older || n.Node != "v24.11.1" {
		t.Errorf("a binary declaring >=26: %+v, %v; want older, against the node on PATH", n, ok)
	}
	// An executable no npm package names is not checked.
	lone := filepath.Join(t.TempDir(), "agent")
	if err := os.WriteFile(lone, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if n, ok := CheckNode(t.Context(), lone, VersionTimeout); ok {
		t.Errorf("an executable outside any package: %+v", n)
	}
}
