package target

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Cluster is a client of one Kubernetes cluster: a dynamic client and a
// REST mapper over cached discovery, sharing one HTTP transport. It is safe
// for concurrent use; every deploy item on the same target shares one.
type Cluster struct {
	// Config is the client configuration. Callers must not change it.
	Config *rest.Config
	// Dynamic reads and writes objects of any kind.
	Dynamic dynamic.Interface
	// DefaultNamespace is where namespaced objects without a namespace go:
	// the kubeconfig context's namespace, else "default".
	DefaultNamespace string

	discovery discovery.CachedDiscoveryInterface
	mapper    *restmapper.DeferredDiscoveryRESTMapper
}

// maxClusters bounds the cache of clients. Executions name a handful of
// targets; the bound only matters for a long-lived process that sees many
// distinct kubeconfigs (such as rotating tokens), whose stale clients are
// dropped oldest first.
const maxClusters = 32

var clusters = struct {
	sync.Mutex
	byKey map[[32]byte]*Cluster
	order [][32]byte
}{byKey: map[[32]byte]*Cluster{}}

// ClusterFor returns the client of a kubernetes-cluster target's config.
// Identical configs share one client (keyed by a hash of the config), so
// all items on one target share its connections, rate limit and discovery
// cache; a client made under another rate limit is not reused. Errors
// never quote the config.
func ClusterFor(config json.RawMessage) (*Cluster, error) {
	l := currentRateLimit()
	key := sha256.Sum256(fmt.Appendf(append([]byte(nil), config...), "\x00%g/%d", l.QPS, l.Burst))
	clusters.Lock()
	defer clusters.Unlock()
	if c, ok := clusters.byKey[key]; ok {
		return c, nil
	}
	c, err := NewCluster(config)
	if err != nil {
		return nil, err
	}
	if len(clusters.order) >= maxClusters {
		delete(clusters.byKey, clusters.order[0])
		clusters.order = clusters.order[1:]
	}
	clusters.byKey[key] = c
	clusters.order = append(clusters.order, key)
	return c, nil
}

// NewCluster builds a client of a kubernetes-cluster target without the
// cache. No request is sent until the client is used.
func NewCluster(config json.RawMessage) (*Cluster, error) {
	rc, err := RESTConfig(config)
	if err != nil {
		return nil, err
	}
	c, err := NewClusterForConfig(rc)
	if err != nil {
		return nil, err
	}
	c.DefaultNamespace = DefaultNamespace(config)
	return c, nil
}

// NewClusterForConfig builds a client from a REST config as it is.
func NewClusterForConfig(rc *rest.Config) (*Cluster, error) {
	routeKlog()
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig cannot be used: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(rc, hc)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(rc, hc)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(dc)
	return &Cluster{
		Config:           rc,
		Dynamic:          dyn,
		DefaultNamespace: "default",
		discovery:        cached,
		mapper:           restmapper.NewDeferredDiscoveryRESTMapper(cached),
	}, nil
}

// Mapping returns how a kind is served. A kind the cached discovery does
// not know is looked up once more after refreshing the cache, so a CRD
// created since the last look-up is found. A kind that is still unknown
// yields an error for which meta.IsNoMatchError is true.
func (c *Cluster) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && meta.IsNoMatchError(err) {
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	return m, err
}

// Invalidate drops the cached discovery, for example after CRDs changed.
func (c *Cluster) Invalidate() { c.mapper.Reset() }

// Resource returns the client of one kind in one namespace, and whether
// the kind is namespaced. For a cluster-scoped kind the namespace is
// ignored; for a namespaced kind an empty namespace means all namespaces
// (for lists) and must not be used to get or write a single object.
func (c *Cluster) Resource(gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, bool, error) {
	m, err := c.Mapping(gvk)
	if err != nil {
		return nil, false, err
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return c.Dynamic.Resource(m.Resource), false, nil
	}
	return c.Dynamic.Resource(m.Resource).Namespace(namespace), true, nil
}

// Get reads one object. For cluster-scoped kinds the namespace is ignored.
func (c *Cluster) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	ri, _, err := c.Resource(gvk, namespace)
	if err != nil {
		return nil, err
	}
	return ri.Get(ctx, name, getOptions)
}
