package component

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Media types OCM gives input blobs when the constructor names none.
const (
	MediaTypeOctet = "application/octet-stream"
	MediaTypeGzip  = "application/gzip"
	MediaTypeTar   = "application/x-tar"
	MediaTypeTGZ   = "application/x-tgz"
)

func buildInput(baseDir string, in *InputSpec) (*Blob, error) {
	if in.Path == "" {
		return nil, fmt.Errorf("input type %s: path is required", in.Type)
	}
	p := in.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(baseDir, p)
	}
	compress := in.Compress != nil && *in.Compress
	switch in.Type {
	case InputTypeFile:
		data, err := readFileLimited(p, MaxFileSize)
		if err != nil {
			return nil, fmt.Errorf("input file %s: %w", in.Path, err)
		}
		mt := in.MediaType
		if compress {
			if data, err = gzipBytes(data); err != nil {
				return nil, err
			}
			if mt == "" {
				mt = MediaTypeGzip
			}
		} else if mt == "" {
			mt = MediaTypeOctet
		}
		return newBlob(mt, data), nil
	case InputTypeDir:
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("input dir %s: %w", in.Path, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("input dir %s: not a directory", in.Path)
		}
		data, err := tarDir(p, in)
		if err != nil {
			return nil, fmt.Errorf("input dir %s: %w", in.Path, err)
		}
		mt := in.MediaType
		if compress {
			if data, err = gzipBytes(data); err != nil {
				return nil, err
			}
			if mt == "" {
				mt = MediaTypeTGZ
			}
		} else if mt == "" {
			mt = MediaTypeTar
		}
		return newBlob(mt, data), nil
	default:
		return nil, fmt.Errorf("input type %q is not supported (supported: dir, file)", in.Type)
	}
}

func gzipBytes(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// limitWriter fails once more than n bytes were written, so a directory
// larger than MaxBlobSize is refused while it is packed, not after.
type limitWriter struct {
	buf bytes.Buffer
	n   int64
}

var errBlobTooLarge = fmt.Errorf("content exceeds the limit of %d bytes", MaxBlobSize)

func (w *limitWriter) Write(p []byte) (int, error) {
	if int64(w.buf.Len()+len(p)) > w.n {
		return 0, errBlobTooLarge
	}
	return w.buf.Write(p)
}

// tarDir packs a directory the way OCM's dir input does: entries are named
// relative to the directory (below its base name with preserveDir), include
// and exclude patterns are shell patterns (path.Match) on that name and also
// prune directories, excludes win, and symlinks are stored as links unless
// followSymlinks is set. Unlike OCM, headers carry no owner and a fixed
// modification time, so the same files give the same blob and digest on
// every checkout.
func tarDir(root string, in *InputSpec) ([]byte, error) {
	w := &limitWriter{n: MaxBlobSize}
	tw := tar.NewWriter(w)
	p := &packer{tw: tw, in: in}
	if in.PreserveDir != nil && *in.PreserveDir {
		p.prefix = filepath.Base(root)
	}
	if err := p.add(p.prefix, root, 0); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return w.buf.Bytes(), nil
}

type packer struct {
	tw     *tar.Writer
	in     *InputSpec
	prefix string
}

// included mirrors OCM: the checked name has the preserveDir prefix trimmed
// (leaving its leading slash, as OCM does).
func (p *packer) included(name string) (bool, error) {
	if p.prefix != "" {
		name = strings.TrimPrefix(name, p.prefix)
	}
	for _, ex := range p.in.ExcludeFiles {
		m, err := path.Match(ex, name)
		if err != nil {
			return false, fmt.Errorf("malformed exclude pattern %q", ex)
		}
		if m {
			return false, nil
		}
	}
	if len(p.in.IncludeFiles) == 0 {
		return true, nil
	}
	for _, inc := range p.in.IncludeFiles {
		m, err := path.Match(inc, name)
		if err != nil {
			return false, fmt.Errorf("malformed include pattern %q", inc)
		}
		if m {
			return true, nil
		}
	}
	return false, nil
}

const maxLinkDepth = 32

func (p *packer) add(name, src string, depth int) error {
	if depth > maxLinkDepth {
		return fmt.Errorf("%s: too many levels of symbolic links or directories", name)
	}
	if depth > 0 { // the root itself is never filtered
		ok, err := p.included(name)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
	}
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	hdr := &tar.Header{Name: name, ModTime: time.Unix(0, 0).UTC(), Format: tar.FormatPAX}
	switch {
	case fi.IsDir():
		if name != "" {
			hdr.Typeflag = tar.TypeDir
			hdr.Name = name + "/"
			hdr.Mode = int64(fi.Mode().Perm())
			if err := p.tw.WriteHeader(hdr); err != nil {
				return err
			}
		}
		entries, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range entries { // ReadDir sorts by name
			if err := p.add(path.Join(name, e.Name()), filepath.Join(src, e.Name()), depth+1); err != nil {
				return err
			}
		}
		return nil
	case fi.Mode().IsRegular():
		if fi.Size() > MaxFileSize {
			return fmt.Errorf("%s is %d bytes, larger than the limit of %d", name, fi.Size(), MaxFileSize)
		}
		hdr.Typeflag = tar.TypeReg
		hdr.Mode = int64(fi.Mode().Perm())
		hdr.Size = fi.Size()
		if err := p.tw.WriteHeader(hdr); err != nil {
			return err
		}
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		n, err := io.Copy(p.tw, io.LimitReader(f, fi.Size()))
		if err != nil {
			return err
		}
		if n != fi.Size() {
			return fmt.Errorf("%s changed while it was read", name)
		}
		return nil
	case fi.Mode()&os.ModeSymlink != 0:
		if p.in.FollowSymlinks != nil && *p.in.FollowSymlinks {
			target, err := filepath.EvalSymlinks(src)
			if err != nil {
				return fmt.Errorf("cannot follow symlink %s: %w", name, err)
			}
			return p.add(name, target, depth+1)
		}
		link, err := os.Readlink(src)
		if err != nil {
			return err
		}
		hdr.Typeflag = tar.TypeSymlink
		hdr.Linkname = link
		hdr.Mode = 0o777
		return p.tw.WriteHeader(hdr)
	default:
		return fmt.Errorf("unsupported file type %s of %s", fi.Mode().Type(), name)
	}
}
