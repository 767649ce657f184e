package exec

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"
)

// A fixed modification time makes unchanged state pack to identical bytes,
// so an untouched state directory never shows up as a change.
var stateModTime = time.Unix(0, 0)

// packState archives dir as a gzip-compressed tar of its regular files and
// directories; anything else is skipped with a note. It returns the archive
// (nil for an empty dir) and its full size, but holds at most limit bytes in
// memory, so that a runaway state directory costs time, not memory.
func packState(dir string, limit int, note func(string)) ([]byte, int, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = root.Close() }()
	fsys := root.FS()

	out := &cappedBuffer{limit: limit}
	gz := gzip.NewWriter(out)
	tw := tar.NewWriter(gz)
	empty := true
	err = fs.WalkDir(fsys, ".", func(name string, e fs.DirEntry, err error) error {
		if err != nil || name == "." {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: name, Mode: int64(info.Mode().Perm()), ModTime: stateModTime}
		switch {
		case e.IsDir():
			hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
		case e.Type().IsRegular():
			hdr.Typeflag, hdr.Size = tar.TypeReg, info.Size()
		default:
			// Symlinks could point outside the state dir and are never followed.
			note(fmt.Sprintf("state: skipping %q (%v): only regular files and directories are kept", name, e.Type()))
			return nil
		}
		empty = false
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil
		}
		f, err := fsys.Open(name)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		_, err = io.Copy(tw, f)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	if err != nil || empty {
		return nil, 0, err
	}
	return out.buf.Bytes(), out.n, nil
}

// cappedBuffer counts everything written but keeps only the first limit bytes.
type cappedBuffer struct {
	buf   bytes.Buffer
	limit int
	n     int
}

func (w *cappedBuffer) Write(p []byte) (int, error) {
	w.n += len(p)
	if room := w.limit - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// unpackState restores an archive made by packState into the empty dir.
func unpackState(data []byte, dir string) error {
	if len(data) == 0 {
		return nil
	}
	// The archive is ours, but it went through storage users can edit:
	// os.Root keeps every entry inside dir whatever its name says.
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(hdr.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("entry %q points outside the state directory", hdr.Name)
		}
		// Owner access is always granted so the next pack can read it all.
		perm := fs.FileMode(hdr.Mode).Perm()
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, perm|0o700); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := root.MkdirAll(path.Dir(name), 0o700); err != nil {
				return err
			}
			if err := writeEntry(root, name, perm|0o600, tr); err != nil {
				return err
			}
		default:
			return fmt.Errorf("entry %q has unsupported type %q", hdr.Name, hdr.Typeflag)
		}
	}
}

func writeEntry(root *os.Root, name string, perm fs.FileMode, r io.Reader) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
