//go:build unix

package ctf_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ctf"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ctf/ctftest"
)

// A FIFO in a repository directory, or given as the repository, is refused
// at once, naming it: opening it would wait for a writer that never comes.
func TestFIFOsAreRefused(t *testing.T) {
	dir := t.TempDir()
	good := ctftest.Files(t, ctftest.Version{Name: "a", Version: "v1", Descriptor: []byte(fmt.Sprintf(desc, "a", "v1", ocm.Digest([]byte("x")))),
		Blobs: []ctftest.Blob{{MediaType: "text/plain", Data: []byte("x")}}})
	withFIFO := func(name string, replace func(k string, v []byte) bool) string {
		p := ctftest.WriteDir(t, filepath.Join(dir, name), good)
		for k, v := range good {
			if replace(k, v) {
				f := filepath.Join(p, filepath.FromSlash(k))
				_ = os.Remove(f)
				if err := syscall.Mkfifo(f, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
		return p
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := ctf.Open(withFIFO("index", func(k string, _ []byte) bool { return k == "artifact-index.json" }))
		if err == nil || !strings.Contains(err.Error(), "artifact-index.json is not a regular file") {
			t.Errorf("FIFO index: %v", err)
		}
		repo, err := ctf.Open(withFIFO("blob", func(k string, v []byte) bool { return strings.HasPrefix(k, "blobs/") && string(v) == "x" }))
		if err != nil {
			t.Error(err)
			return
		}
		cv, err := repo.ComponentVersion(context.Background(), "a", "v1")
		if err != nil {
			t.Error(err)
			return
		}
		r, _ := cv.Descriptor.Resource("data", nil)
		if _, err := cv.Blobs.Blob(context.Background(), r.Access); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
			t.Errorf("FIFO blob: %v", err)
		}
		fifo := filepath.Join(dir, "repo.fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Error(err)
			return
		}
		if _, err := ctf.Open(fifo); err == nil || !strings.Contains(err.Error(), "repo.fifo is not a regular file") {
			t.Errorf("FIFO repository: %v", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("reading a repository with a FIFO hangs")
	}
}
