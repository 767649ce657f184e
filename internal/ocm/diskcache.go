package ocm

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DiskCache is a Cache in a directory, shared by every operation and every
// provider process of a user: blobs/sha256/<hex> holds content by digest,
// tags/<hash of the key> the digest a tag last resolved to. Writes go to a
// temporary file renamed into place, so concurrent processes never see a
// half-written entry; content is checked against its digest when read, so
// a damaged entry is a miss, not a wrong answer.
type DiskCache struct {
	dir string
}

// DefaultCacheDir is the cache directory when none is configured: the
// OS's user cache directory.
func DefaultCacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "terraform-provider-landscaper"), nil
}

// NewDiskCache returns a cache in dir ("~/" is the home directory),
// creating it if needed.
func NewDiskCache(dir string) (*DiskCache, error) {
	if rest, ok := strings.CutPrefix(dir, "~/"); ok || dir == "~" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, err
		}
		dir = filepath.Join(home, rest)
	}
	for _, sub := range []string{"blobs/sha256", "tags"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, fmt.Errorf("cache directory: %w", err)
		}
	}
	return &DiskCache{dir: dir}, nil
}

// Dir returns the cache directory.
func (c *DiskCache) Dir() string { return c.dir }

func (c *DiskCache) blobPath(digest string) (string, bool) {
	hexDigest, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || len(hexDigest) != 64 {
		return "", false
	}
	if _, err := hex.DecodeString(hexDigest); err != nil {
		return "", false
	}
	return filepath.Join(c.dir, "blobs", "sha256", hexDigest), true
}

// Get implements Cache.
func (c *DiskCache) Get(digest string) ([]byte, bool) {
	p, ok := c.blobPath(digest)
	if !ok {
		return nil, false
	}
	data, err := os.ReadFile(p)
	if err != nil || Digest(data) != digest {
		return nil, false
	}
	return data, true
}

// Put implements Cache. Failures to write are ignored: the cache only
// saves work.
func (c *DiskCache) Put(digest string, data []byte) {
	p, ok := c.blobPath(digest)
	if !ok || Digest(data) != digest {
		return
	}
	if _, err := os.Stat(p); err == nil {
		return
	}
	_ = writeAtomic(p, data)
}

func (c *DiskCache) tagPath(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(c.dir, "tags", hex.EncodeToString(sum[:]))
}

// Tag implements Cache. The file holds the key too, so a hash collision
// is a miss.
func (c *DiskCache) Tag(key string) (string, bool) {
	data, err := os.ReadFile(c.tagPath(key))
	if err != nil {
		return "", false
	}
	k, digest, ok := strings.Cut(string(data), "\n")
	if !ok || k != key {
		return "", false
	}
	return strings.TrimSpace(digest), true
}

// SetTag implements Cache.
func (c *DiskCache) SetTag(key, digest string) {
	if old, ok := c.Tag(key); ok && old == digest {
		return
	}
	_ = writeAtomic(c.tagPath(key), []byte(key+"\n"+digest+"\n"))
}

func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	return nil
}
