package ctf_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ctf"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ctf/ctftest"
)

// BenchmarkArchiveOperation is what every operation does with a CTF
// archive that also holds a large blob (64 MiB, incompressible, of
// another version): open it, look a version up, read its small blob.
// -benchmem shows what reading the archive costs in memory.
func BenchmarkArchiveOperation(b *testing.B) {
	big := make([]byte, 64<<20)
	if _, err := rand.Read(big); err != nil {
		b.Fatal(err)
	}
	small := []byte("small blob")
	v := func(name string, data []byte) ctftest.Version {
		return ctftest.Version{Name: name, Version: "1.0.0", Descriptor: []byte(fmt.Sprintf(desc, name, "1.0.0", ocm.Digest(data))),
			Blobs: []ctftest.Blob{{MediaType: "text/plain", Data: data}}}
	}
	files := ctftest.Files(b, v("example.com/big", big), v("example.com/small", small))
	dir := b.TempDir()
	for _, kind := range []string{"tar", "tgz"} {
		p := ctftest.WriteArchive(b, filepath.Join(dir, "ctf."+kind), files)
		b.Run(kind, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				repo, err := ctf.Open(p)
				if err != nil {
					b.Fatal(err)
				}
				cv, err := repo.ComponentVersion(context.Background(), "example.com/small", "1.0.0")
				if err != nil {
					b.Fatal(err)
				}
				r, _ := cv.Descriptor.Resource("data", nil)
				blob, err := cv.Blobs.Blob(context.Background(), r.Access)
				if err != nil || string(blob.Data) != string(small) {
					b.Fatalf("%q, %v", blob.Data, err)
				}
			}
		})
	}
}
