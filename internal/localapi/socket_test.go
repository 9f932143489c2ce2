package localapi

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStaleSocketIsReplaced(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, SocketName)
	ln, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close() // as a killed gonogo leaves it
	ln2, err := Listen(dir)
	if err != nil {
		t.Fatalf("listen over a stale socket: %v", err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, %v; want 0600", fi.Mode(), err)
	}
	ln2.Close()
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Fatalf("closing leaves the socket: %v", err)
	}
	// Something else at that name is not removed.
	if err := os.WriteFile(p, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(dir); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("listen over a regular file: %v", err)
	}
}

func TestLongDataDirectoryStillServes(t *testing.T) {
	dir := t.TempDir()
	for len(dir) < 150 {
		dir = filepath.Join(dir, "a-rather-long-directory-name")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir("/") // no short relative path either
	addr, release, err := socketAddr(dir)
	if err != nil {
		t.Skipf("no way to reach a long socket path here: %v", err)
	}
	release()
	if len(addr) > maxSocketPath {
		t.Fatalf("address %q is %d bytes", addr, len(addr))
	}
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
	}()
	c, err := net.Dial("unix", addrOrFail(t, dir))
	if err != nil {
		t.Fatalf("dial %s: %v", dir, err)
	}
	c.Close()
}

func addrOrFail(t *testing.T, dir string) string {
	t.Helper()
	addr, release, err := socketAddr(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return addr
}
