package ocm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiskCache(t *testing.T) {
	dir := t.TempDir()
	c, err := NewDiskCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("blueprint")
	d := Digest(data)
	if _, ok := c.Get(d); ok {
		t.Fatal("empty cache hit")
	}
	c.Put("sha256:"+strings.Repeat("0", 64), data) // wrong digest: not stored
	if _, ok := c.Get("sha256:" + strings.Repeat("0", 64)); ok {
		t.Fatal("content stored under a digest that is not its own")
	}
	c.Put(d, data)
	// A second cache on the same directory (another provider process)
	// sees it.
	c2, _ := NewDiskCache(dir)
	if got, ok := c2.Get(d); !ok || string(got) != "blueprint" {
		t.Fatalf("Get = %q, %v", got, ok)
	}
	// A damaged entry is a miss.
	p, _ := c.blobPath(d)
	if err := os.WriteFile(p, []byte("tampered"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(d); ok {
		t.Fatal("damaged entry served")
	}
	for _, bad := range []string{"", "sha256:../../etc", "md5:abc", "sha256:" + strings.Repeat("z", 64)} {
		if _, ok := c.Get(bad); ok {
			t.Fatalf("Get(%q) hit", bad)
		}
		c.Put(bad, data)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "blobs", "sha256"))
	if len(entries) != 1 {
		t.Fatalf("blob entries = %d, want 1", len(entries))
	}

	c.SetTag("reg/component-descriptors/a:1", d)
	if got, ok := c2.Tag("reg/component-descriptors/a:1"); !ok || got != d {
		t.Fatalf("Tag = %q, %v", got, ok)
	}
	if _, ok := c2.Tag("reg/component-descriptors/a:2"); ok {
		t.Fatal("unknown tag hit")
	}
}

func TestDiskCacheHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	c, err := NewDiskCache("~/.cache/x")
	if err != nil {
		t.Fatal(err)
	}
	if c.Dir() != filepath.Join(home, ".cache", "x") {
		t.Fatalf("Dir = %s", c.Dir())
	}
}
