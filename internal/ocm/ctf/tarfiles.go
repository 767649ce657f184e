package ctf

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// An archive is not held in memory: opening it reads its entry headers
// into an index, and each read takes the one entry from the file, by its
// offset in a plain tar, by decompressing up to it in a gzipped one. Small
// entries of a gzipped archive (the index, manifests, descriptors: what
// every operation reads) are kept from the indexing pass, within a bound,
// so that they cost no second pass.
const (
	keepEntrySize = 64 << 10
	keepTotal     = 8 << 20
)

type archiveFiles struct {
	path    string
	gzipped bool
	// size and modTime of the archive when it was indexed: an archive
	// that changes while in use is refused rather than read at offsets
	// that no longer hold the entries.
	size    int64
	modTime time.Time
	entries map[string]archiveEntry
}

type archiveEntry struct {
	// seq is the entry's position among the archive's entries.
	seq int
	// offset of the entry's data in a plain tar.
	offset int64
	size   int64
	data   []byte
}

// openRegular opens p for reading if it is a regular file, without
// blocking on a FIFO swapped in after a check.
func openRegular(p string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = notRegular(p, fi)
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// tarReader returns a tar reader over f from its start, decompressing a
// gzipped archive.
func (a *archiveFiles) tarReader(f *os.File) (*tar.Reader, error) {
	if !a.gzipped {
		// f itself, so that tar skips entries by seeking.
		return tar.NewReader(f), nil
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return tar.NewReader(io.LimitReader(zr, MaxArchiveSize+1)), nil
}

// readArchive indexes a tar archive, gzipped or not. Entries with
// absolute names, names that climb out of the archive, or links are
// refused: an archive must not reach outside itself.
func readArchive(p string) (*archiveFiles, error) {
	f, fi, err := openRegular(p)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var head [2]byte
	n, _ := io.ReadFull(f, head[:])
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	a := &archiveFiles{path: p, gzipped: n == 2 && head[0] == 0x1f && head[1] == 0x8b, size: fi.Size(), modTime: fi.ModTime(),
		entries: map[string]archiveEntry{}}
	tr, err := a.tarReader(f)
	if err != nil {
		return nil, err
	}
	var total, kept int64
	for i := 0; ; i++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if i == 0 {
				return nil, fmt.Errorf("not a directory, tar or tar.gz archive: %w", err)
			}
			return nil, fmt.Errorf("tar: %w", err)
		}
		if i >= MaxEntries {
			return nil, fmt.Errorf("more than %d entries", MaxEntries)
		}
		name := h.Name
		if path.IsAbs(name) || strings.HasPrefix(path.Clean(name), "../") || path.Clean(name) == ".." || strings.Contains(name, "\\") {
			return nil, fmt.Errorf("entry %q points outside the archive", name)
		}
		name = strings.TrimPrefix(path.Clean(name), "./")
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		case tar.TypeSymlink, tar.TypeLink:
			return nil, fmt.Errorf("entry %q is a link, which an archive repository must not hold", name)
		default:
			continue
		}
		if h.Size > MaxBlobSize {
			return nil, fmt.Errorf("entry %q is %d bytes, larger than the limit of %d", name, h.Size, MaxBlobSize)
		}
		total += h.Size
		if total > MaxArchiveSize {
			return nil, fmt.Errorf("the archive holds more than %d bytes", MaxArchiveSize)
		}
		e := archiveEntry{seq: i, size: h.Size}
		if a.gzipped {
			if h.Size <= keepEntrySize && kept+h.Size <= keepTotal {
				if e.data, err = ocm.ReadLimited(tr, keepEntrySize, name); err != nil {
					return nil, err
				}
				kept += h.Size
			}
		} else if e.offset, err = f.Seek(0, io.SeekCurrent); err != nil {
			return nil, err
		}
		a.entries[name] = e
	}
	return a, nil
}

func (a *archiveFiles) exists(name string) bool { _, ok := a.entries[name]; return ok }

func (a *archiveFiles) read(name string, limit int64) ([]byte, error) {
	e, ok := a.entries[name]
	if !ok {
		return nil, fs.ErrNotExist
	}
	if e.size > limit {
		return nil, fmt.Errorf("%s is %d bytes, larger than the limit of %d", name, e.size, limit)
	}
	if e.data != nil {
		return e.data, nil
	}
	f, fi, err := openRegular(a.path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if fi.Size() != a.size || !fi.ModTime().Equal(a.modTime) {
		return nil, fmt.Errorf("the archive changed while in use (reading %s)", name)
	}
	if !a.gzipped {
		data, err := ocm.ReadLimited(io.NewSectionReader(f, e.offset, e.size), limit, name)
		if err == nil && int64(len(data)) != e.size {
			err = fmt.Errorf("%s is truncated", name)
		}
		return data, err
	}
	tr, err := a.tarReader(f)
	if err != nil {
		return nil, err
	}
	for i := 0; ; i++ {
		h, err := tr.Next()
		if err != nil {
			return nil, fmt.Errorf("the archive changed while in use (reading %s): %w", name, err)
		}
		if i == e.seq {
			if h.Size != e.size {
				return nil, fmt.Errorf("the archive changed while in use (reading %s)", name)
			}
			return ocm.ReadLimited(tr, limit, name)
		}
	}
}
