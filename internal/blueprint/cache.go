package blueprint

import (
	"path/filepath"
	"sync"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/component"
)

// Cache loads each blueprint at most once: one directory, or one resource of
// one component, is read a single time however often it is asked for. Use
// one Cache per operation so that changes between operations are seen. It
// is safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	once sync.Once
	bp   *Blueprint
	err  error
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{entries: map[string]*cacheEntry{}} }

func (c *Cache) get(key string, load func() (*Blueprint, error)) (*Blueprint, error) {
	c.mu.Lock()
	e, ok := c.entries[key]
	if !ok {
		e = &cacheEntry{}
		c.entries[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.bp, e.err = load() })
	return e.bp, e.err
}

// Dir is LoadDir, once per directory.
func (c *Cache) Dir(dir string) (*Blueprint, error) {
	key := dir
	if abs, err := filepath.Abs(dir); err == nil {
		key = abs
	}
	return c.get("dir\x00"+key, func() (*Blueprint, error) { return LoadDir(dir) })
}

// Resource is LoadResource, once per resolved component resource. A Cache
// assumes one component Set: components are told apart by name and version.
func (c *Cache) Resource(set *component.Set, comp *component.Component, ref string) (*Blueprint, error) {
	rc, r, err := resolveResource(set, comp, ref)
	if err != nil {
		return nil, err
	}
	key := "res\x00" + rc.ID().String() + "\x00" + r.Name
	return c.get(key, func() (*Blueprint, error) { return loadResource(rc, r) })
}
