package target

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

	// rest is the client under Dynamic, for the one request whose answer
	// Dynamic throws away (Delete).
	rest      rest.Interface
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
	// As dynamic.NewForConfigAndClient builds it, but kept: Delete needs
	// the answer's body.
	dcfg := dynamic.ConfigFor(rc)
	dcfg.GroupVersion = nil
	dcfg.APIPath = "/if-you-see-this-search-for-the-break"
	restClient, err := rest.UnversionedRESTClientForConfigAndClient(dcfg, hc)
	if err != nil {
		return nil, err
	}
	dyn := dynamic.New(restClient)
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(rc, hc)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(dc)
	return &Cluster{
		Config:           rc,
		Dynamic:          dyn,
		DefaultNamespace: "default",
		rest:             restClient,
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

// Delete deletes one object (for cluster-scoped kinds the namespace is
// ignored) and reports whether it is gone, from the API server's answer:
// deleted at once, the answer is a Status, or (for kinds whose storage
// returns the deleted object, such as Pods and Namespaces) the
// object without a deletionTimestamp; a deletion held up by finalizers
// or a grace period answers with the object carrying its
// deletionTimestamp. Knowing this from the DELETE itself saves a GET per
// object, which is most of what deleting many small objects costs.
//
// One answer would mislead: a repeated DELETE of an object whose graceful
// deletion is pending answers with a Status when its storage does not
// return deleted objects (k8s.io/apiserver's Store.Delete). In Kubernetes
// only Pods delete gracefully, and their storage returns the object, so
// this takes a Status as gone.
//
// A missing object is an error for which apierrors.IsNotFound is true.
func (c *Cluster) Delete(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, opts metav1.DeleteOptions) (gone bool, err error) {
	m, err := c.Mapping(gvk)
	if err != nil {
		return false, err
	}
	seg := []string{"api"}
	if m.Resource.Group != "" {
		seg = []string{"apis", m.Resource.Group}
	}
	seg = append(seg, m.Resource.Version)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		seg = append(seg, "namespaces", namespace)
	}
	seg = append(seg, m.Resource.Resource, name)
	opts.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"}
	body, err := json.Marshal(&opts)
	if err != nil {
		return false, err
	}
	raw, err := c.rest.Delete().AbsPath(seg...).SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Raw()
	if err != nil {
		return false, err
	}
	var answer struct {
		Kind     string `json:"kind"`
		Metadata struct {
			DeletionTimestamp *string `json:"deletionTimestamp"`
		} `json:"metadata"`
	}
	// An answer we cannot read is no evidence either way: the caller
	// looks again.
	readable := json.Unmarshal(raw, &answer) == nil
	return readable && (answer.Kind == "Status" || answer.Metadata.DeletionTimestamp == nil), nil
}
