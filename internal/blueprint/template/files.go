package template

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/mandelsoft/vfs/pkg/memoryfs"
	"github.com/mandelsoft/vfs/pkg/vfs"
)

// Limits on what a render reads and produces, so a hostile or broken
// blueprint cannot exhaust memory.
const (
	maxFilesBytes  = 64 << 20
	maxFiles       = 10000
	maxOutputBytes = 32 << 20
	maxIncludes    = 100
)

// cleanPath maps the paths templates use ("data/x", "/data/x", "./data/x")
// onto fs.FS paths.
func cleanPath(p string) string {
	p = path.Clean("/" + p)
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return "."
	}
	return p
}

func readFile(fsys fs.FS, name string) ([]byte, error) {
	if fsys == nil {
		return nil, fmt.Errorf("open %s: blueprint has no files", name)
	}
	info, err := fs.Stat(fsys, cleanPath(name))
	if err != nil {
		return nil, err
	}
	if info.Size() > maxFilesBytes {
		return nil, fmt.Errorf("file %s is larger than %d bytes", name, maxFilesBytes)
	}
	return fs.ReadFile(fsys, cleanPath(name))
}

// toVFS copies the blueprint files into an in-memory file system for Spiff,
// whose file functions need a vfs. Writes of templates (Spiff's write,
// tempfile) land in this copy and are discarded with it.
func toVFS(fsys fs.FS) (vfs.FileSystem, error) {
	mem := memoryfs.New()
	if fsys == nil {
		return mem, nil
	}
	var total int64
	count := 0
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		count++
		if count > maxFiles {
			return fmt.Errorf("blueprint has more than %d files", maxFiles)
		}
		if p == "." {
			return nil
		}
		if d.IsDir() {
			return mem.MkdirAll("/"+p, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		total += int64(len(data))
		if total > maxFilesBytes {
			return fmt.Errorf("blueprint files exceed %d bytes", maxFilesBytes)
		}
		return vfs.WriteFile(mem, "/"+p, data, 0o644)
	})
	if err != nil {
		return nil, fmt.Errorf("unable to load blueprint files: %w", err)
	}
	return mem, nil
}

// limitedBuffer fails writes beyond maxOutputBytes so a runaway template
// stops instead of filling memory.
type limitedBuffer struct {
	strings.Builder
}

var errOutputTooLarge = errors.New("rendered output exceeds the size limit")

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > maxOutputBytes {
		return 0, errOutputTooLarge
	}
	return b.Builder.Write(p)
}
