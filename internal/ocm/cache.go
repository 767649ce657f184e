package ocm

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
)

// Digest returns "sha256:<hex>" of data.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// MemoryCache is a Cache in memory, for tests and for one operation.
type MemoryCache struct {
	mu    sync.Mutex
	blobs map[string][]byte
	tags  map[string]string
}

// NewMemoryCache returns an empty MemoryCache.
func NewMemoryCache() *MemoryCache {
	return &MemoryCache{blobs: map[string][]byte{}, tags: map[string]string{}}
}

// Get implements Cache.
func (c *MemoryCache) Get(digest string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.blobs[digest]
	return b, ok
}

// Put implements Cache.
func (c *MemoryCache) Put(digest string, data []byte) {
	if Digest(data) != digest {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.blobs[digest] = data
}

// Tag implements Cache.
func (c *MemoryCache) Tag(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.tags[key]
	return d, ok
}

// SetTag implements Cache.
func (c *MemoryCache) SetTag(key, digest string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tags[key] = digest
}
