package blueprint

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing/fstest"

	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/component"
)

// Limits on what loading a blueprint may read. A file above MaxFileSize or a
// blueprint above MaxTotalSize is an error naming it; nothing larger than
// the limit is read into memory.
const (
	MaxFileSize  = 16 << 20
	MaxTotalSize = 64 << 20
	MaxFiles     = 10000
)

// Blueprint is a loaded blueprint: its definition, its subinstallation
// templates and all of its files, each read exactly once.
type Blueprint struct {
	// Source says where the blueprint came from, for messages.
	Source     string
	Definition Definition
	// Subinstallations holds the templates of Definition.Subinstallations,
	// index for index, with file entries read and decoded.
	Subinstallations []*InstallationTemplate
	// FS holds the blueprint's files; names are relative to its root.
	FS fs.FS

	files  map[string][]byte
	digest string
}

// Digest is a content digest over all files of the blueprint.
func (b *Blueprint) Digest() string { return b.digest }

// Files returns the names of all files, sorted.
func (b *Blueprint) Files() []string {
	names := make([]string, 0, len(b.files))
	for n := range b.files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ReadFile returns a file of the blueprint. The name is resolved like a
// Landscaper blueprint path: a leading slash means the blueprint root, and a
// name that leaves the blueprint is an error.
func (b *Blueprint) ReadFile(name string) ([]byte, error) {
	rel, err := CleanPath(name)
	if err != nil {
		return nil, err
	}
	data, ok := b.files[rel]
	if !ok {
		return nil, fmt.Errorf("blueprint %s has no file %q", b.Source, name)
	}
	return data, nil
}

// TemplateSource returns the template text of an execution the way
// Landscaper's engines pick it: an inline template wins over file; a
// GoTemplate's inline template must be a string; a Spiff inline template
// that is a string is itself the YAML source, otherwise it is the value.
func (b *Blueprint) TemplateSource(exec TemplateExecutor) ([]byte, error) {
	if len(exec.Template) != 0 && string(exec.Template) != "null" {
		var s string
		isString := json.Unmarshal(exec.Template, &s) == nil
		switch {
		case isString:
			return []byte(s), nil
		case exec.Type == TemplateTypeGoTemplate:
			return nil, fmt.Errorf("execution %q: a GoTemplate template must be a string", exec.Name)
		default:
			return exec.Template, nil
		}
	}
	if exec.File != "" {
		data, err := b.ReadFile(exec.File)
		if err != nil {
			return nil, fmt.Errorf("execution %q: %w", exec.Name, err)
		}
		return data, nil
	}
	return nil, fmt.Errorf("execution %q has neither template nor file", exec.Name)
}

// CleanPath turns a path inside a blueprint into its file name relative to
// the root. Landscaper reads blueprint files from a filesystem rooted at the
// blueprint, so "/x.yaml" and "x.yaml" name the same file; ".." that climbs
// above the root is an error.
func CleanPath(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.ContainsRune(p, 0) || strings.Contains(p, `\`) {
		return "", fmt.Errorf("path %q: invalid characters", p)
	}
	var parts []string
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "", ".":
		case "..":
			if len(parts) == 0 {
				return "", fmt.Errorf("path %q leaves the blueprint directory", p)
			}
			parts = parts[:len(parts)-1]
		default:
			parts = append(parts, seg)
		}
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("path %q names the blueprint root, not a file", p)
	}
	return strings.Join(parts, "/"), nil
}

// LoadDir loads a blueprint from a directory. Symlinks that point outside
// the directory are errors.
func LoadDir(dir string) (*Blueprint, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("blueprint %s: %w", dir, err)
	}
	defer func() { _ = root.Close() }()
	files := map[string][]byte{}
	var total int64
	err = fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, werr error) error {
		if werr != nil {
			return werr
		}
		if d.IsDir() {
			return nil
		}
		// Stat through the root follows a symlink only while it stays inside.
		fi, err := root.Stat(name)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if fi.IsDir() {
			return fmt.Errorf("%s: symlinked directories are not supported", name)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", name)
		}
		if fi.Size() > MaxFileSize {
			return fmt.Errorf("%s is %d bytes, larger than the limit of %d", name, fi.Size(), MaxFileSize)
		}
		if total += fi.Size(); total > MaxTotalSize {
			return fmt.Errorf("%s: the blueprint is larger than the limit of %d bytes", name, MaxTotalSize)
		}
		if len(files) >= MaxFiles {
			return fmt.Errorf("the blueprint has more than %d files", MaxFiles)
		}
		f, err := root.Open(name)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer func() { _ = f.Close() }()
		data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if len(data) > MaxFileSize {
			return fmt.Errorf("%s is larger than the limit of %d bytes", name, MaxFileSize)
		}
		files[name] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("blueprint %s: %w", dir, err)
	}
	return newBlueprint(dir, files)
}

// LoadFiles loads a blueprint from in-memory files (name to content).
func LoadFiles(source string, files map[string][]byte) (*Blueprint, error) {
	clean := make(map[string][]byte, len(files))
	var total int64
	for name, data := range files {
		rel, err := CleanPath(name)
		if err != nil {
			return nil, fmt.Errorf("blueprint %s: %w", source, err)
		}
		if len(data) > MaxFileSize {
			return nil, fmt.Errorf("blueprint %s: %s is %d bytes, larger than the limit of %d", source, name, len(data), MaxFileSize)
		}
		if total += int64(len(data)); total > MaxTotalSize {
			return nil, fmt.Errorf("blueprint %s: larger than the limit of %d bytes", source, MaxTotalSize)
		}
		if _, dup := clean[rel]; dup {
			return nil, fmt.Errorf("blueprint %s: file %s given twice", source, rel)
		}
		clean[rel] = data
	}
	if len(clean) > MaxFiles {
		return nil, fmt.Errorf("blueprint %s: more than %d files", source, MaxFiles)
	}
	return newBlueprint(source, clean)
}

// LoadInline loads the inline blueprint of an installation template
// (blueprint.filesystem): an object of file names to contents, where an
// object value is a directory.
func LoadInline(source string, filesystem json.RawMessage) (*Blueprint, error) {
	var root map[string]any
	if err := json.Unmarshal(filesystem, &root); err != nil {
		return nil, fmt.Errorf("blueprint %s: filesystem must be an object of file names to contents: %w", source, err)
	}
	files := map[string][]byte{}
	var walk func(prefix string, m map[string]any) error
	walk = func(prefix string, m map[string]any) error {
		for k, v := range m {
			name := path.Join(prefix, k)
			switch t := v.(type) {
			case string:
				files[name] = []byte(t)
			case map[string]any:
				if err := walk(name, t); err != nil {
					return err
				}
			default:
				return fmt.Errorf("filesystem entry %s must be a string (file) or an object (directory)", name)
			}
		}
		return nil
	}
	if err := walk("", root); err != nil {
		return nil, fmt.Errorf("blueprint %s: %w", source, err)
	}
	return LoadFiles(source, files)
}

// LoadArchive loads a blueprint from a tar archive, gzipped or not, as a
// blueprint resource of a component holds it.
func LoadArchive(source string, data []byte) (*Blueprint, error) {
	files, err := readArchive(data)
	if err != nil {
		return nil, fmt.Errorf("blueprint %s: %w", source, err)
	}
	return newBlueprint(source, files)
}

// LoadResource loads the blueprint a component resource holds. ref is a
// cd:// URI relative to comp or the plain name of one of its resources.
func LoadResource(set *component.Set, comp *component.Component, ref string) (*Blueprint, error) {
	c, r, err := resolveResource(set, comp, ref)
	if err != nil {
		return nil, err
	}
	return loadResource(c, r)
}

func loadResource(c *component.Component, r *component.Resource) (*Blueprint, error) {
	blob, err := r.Content(c)
	if err != nil {
		return nil, err
	}
	return LoadArchive(fmt.Sprintf("resource %q of component %s", r.Name, c.ID()), blob.Data)
}

func resolveResource(set *component.Set, comp *component.Component, ref string) (*component.Component, *component.Resource, error) {
	if strings.HasPrefix(ref, "cd://") {
		c, r, err := set.Resolve(comp, ref)
		if err != nil {
			return nil, nil, err
		}
		if r == nil {
			return nil, nil, fmt.Errorf("%s names a component, not a resource", ref)
		}
		return c, r, nil
	}
	if comp == nil {
		return nil, nil, fmt.Errorf("no component to find resource %q in", ref)
	}
	r, err := comp.Resource(ref)
	if err != nil {
		return nil, nil, err
	}
	return comp, r, nil
}

func readArchive(data []byte) (map[string][]byte, error) {
	var r io.Reader = bytes.NewReader(data)
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		// Headers and padding come on top of the file contents; the limit
		// keeps a gzip bomb from being inflated without bound.
		r = io.LimitReader(zr, MaxTotalSize+MaxFiles*1024)
	}
	tr := tar.NewReader(r)
	files := map[string][]byte{}
	links := map[string]string{}
	var total int64
	entries := 0
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if entries == 0 {
				return nil, fmt.Errorf("not a tar archive (tar or tar+gzip expected): %w", err)
			}
			return nil, fmt.Errorf("tar: %w", err)
		}
		if entries++; entries > MaxFiles {
			return nil, fmt.Errorf("more than %d entries", MaxFiles)
		}
		if hdr.Typeflag == tar.TypeDir || hdr.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		name, err := CleanPath(hdr.Name)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", hdr.Name, err)
		}
		switch hdr.Typeflag {
		case tar.TypeReg:
			if hdr.Size > MaxFileSize {
				return nil, fmt.Errorf("%s is %d bytes, larger than the limit of %d", name, hdr.Size, MaxFileSize)
			}
			if total += hdr.Size; total > MaxTotalSize {
				return nil, fmt.Errorf("%s: the blueprint is larger than the limit of %d bytes", name, MaxTotalSize)
			}
			buf, err := io.ReadAll(io.LimitReader(tr, hdr.Size))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			files[name] = buf
		case tar.TypeSymlink:
			target := hdr.Linkname
			if !strings.HasPrefix(target, "/") {
				target = path.Join(path.Dir(name), target)
			}
			t, err := CleanPath(target)
			if err != nil {
				return nil, fmt.Errorf("symlink %s: %w", name, err)
			}
			links[name] = t
		case tar.TypeLink:
			t, err := CleanPath(hdr.Linkname)
			if err != nil {
				return nil, fmt.Errorf("hard link %s: %w", name, err)
			}
			links[name] = t
		default:
			return nil, fmt.Errorf("%s: unsupported tar entry type %q", name, hdr.Typeflag)
		}
	}
	for name, target := range links {
		t := target
		for range 16 {
			if next, ok := links[t]; ok {
				t = next
				continue
			}
			break
		}
		data, ok := files[t]
		if !ok {
			return nil, fmt.Errorf("link %s points to %s, which is not a file of the blueprint", name, target)
		}
		files[name] = data
	}
	return files, nil
}

func newBlueprint(source string, files map[string][]byte) (*Blueprint, error) {
	data, ok := files[BlueprintFileName]
	if !ok {
		return nil, fmt.Errorf("blueprint %s: no %s", source, BlueprintFileName)
	}
	b := &Blueprint{Source: source, files: files}
	if err := decodeStrict(data, &b.Definition); err != nil {
		return nil, fmt.Errorf("blueprint %s: %s: %w", source, BlueprintFileName, err)
	}
	if err := b.checkDefinition(); err != nil {
		return nil, fmt.Errorf("blueprint %s: %s: %w", source, BlueprintFileName, err)
	}
	mfs := fstest.MapFS{}
	for name, content := range files {
		mfs[name] = &fstest.MapFile{Data: content, Mode: 0o444}
	}
	b.FS = mfs
	b.digest = digestFiles(files)
	return b, nil
}

func digestFiles(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		_, _ = fmt.Fprintf(h, "%s\x00%d\x00", n, len(files[n]))
		_, _ = h.Write(files[n])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

var jsonErrPrefix = regexp.MustCompile(`^(error unmarshaling JSON: )?(while decoding JSON: )?(json: )?`)

// decodeStrict decodes YAML (or JSON) into v and fails on unknown or
// duplicate fields. Landscaper itself ignores unknown fields; a typo in a
// blueprint would then silently change what it does, so here it is an error
// naming the field.
func decodeStrict(data []byte, v any) error {
	if err := yaml.UnmarshalStrict(data, v); err != nil {
		return errors.New(jsonErrPrefix.ReplaceAllString(err.Error(), ""))
	}
	return nil
}

func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
