package lscluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Errors a caller can tell apart with errors.Is; the messages name what was
// looked up.
var (
	// ErrUnreachable: the API server did not answer.
	ErrUnreachable = errors.New("the Landscaper cluster cannot be reached")
	// ErrNotLandscaper: the API server serves none of Landscaper's CRDs.
	ErrNotLandscaper = errors.New("not a Landscaper resource cluster")
	// ErrNotFound: an object the installation needs is gone.
	ErrNotFound = errors.New("not found")
)

// requestTimeout bounds every request when the config sets no timeout, so
// an unreachable cluster fails instead of hanging an import.
const requestTimeout = 30 * time.Second

// Reader reads one Landscaper resource cluster. It only ever gets and
// lists.
type Reader struct {
	host      string
	dynamic   dynamic.Interface
	discovery discovery.DiscoveryInterface
}

// Server is the API server the reader reads, as its config names it, so
// that what was written to one cluster is never looked for on another.
func (r *Reader) Server() string { return strings.ToLower(strings.TrimSuffix(r.host, "/")) }

// NamespaceUID is the UID of a namespace on the API server the reader
// reads. With Server, it tells the cluster objects were written to from
// another one answering at the same URL (a port-forward,
// https://kubernetes.default.svc, a DNS name pointed at a new cluster),
// and the namespace they were written to from one deleted and created
// again, which took them along. "" without an error when the credentials
// may not read the namespace; an ErrNotFound when it is not there.
func (r *Reader) NamespaceUID(ctx context.Context, namespace string) (string, error) {
	u, err := r.dynamic.Resource(namespacesGVR).Get(ctx, namespace, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "", fmt.Errorf("%w: namespace %s", ErrNotFound, namespace)
	case apierrors.IsForbidden(err):
		return "", nil
	case err != nil:
		return "", r.callError(err, "reading namespace "+namespace)
	}
	return string(u.GetUID()), nil
}

// New returns a reader of the cluster the config points to. It does not
// contact the cluster yet.
func New(config *rest.Config) (*Reader, error) {
	rc := rest.CopyConfig(config)
	if rc.Timeout == 0 {
		rc.Timeout = requestTimeout
	}
	// The reader sends one request at a time, so the API server never
	// sees more than one in flight from it; client-go's default limit of
	// 5 a second would only make reading a large tree slow (a negative
	// QPS disables the limiter). A config that sets a limit keeps it.
	if rc.QPS == 0 && rc.RateLimiter == nil {
		rc.QPS = -1
	}
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return nil, fmt.Errorf("the Landscaper cluster's config cannot be used: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(rc, hc)
	if err != nil {
		return nil, fmt.Errorf("the Landscaper cluster's config cannot be used: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(rc, hc)
	if err != nil {
		return nil, fmt.Errorf("the Landscaper cluster's config cannot be used: %w", err)
	}
	return &Reader{host: rc.Host, dynamic: dyn, discovery: dc}, nil
}

// requiredResources are the CRDs without which nothing can be read.
var requiredResources = []string{"installations", "targets", "dataobjects", "contexts"}

// check asks the API server whether it serves Landscaper's API.
func (r *Reader) check() error {
	list, err := r.discovery.ServerResourcesForGroupVersion(GroupVersion.String())
	if err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%w: the API server at %s serves no %s (Landscaper's CRDs are not installed)", ErrNotLandscaper, r.host, GroupVersion)
		}
		return r.callError(err, "asking the API server at "+r.host+" for "+GroupVersion.String())
	}
	var missing []string
	for _, name := range requiredResources {
		if !slices.ContainsFunc(list.APIResources, func(res metav1.APIResource) bool { return res.Name == name }) {
			missing = append(missing, name+"."+group)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: the API server at %s serves %s without the CRDs %s", ErrNotLandscaper, r.host, GroupVersion, strings.Join(missing, ", "))
	}
	return nil
}

// callError explains a failed request that is not about one object.
func (r *Reader) callError(err error, what string) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		if code == http.StatusUnauthorized || code == http.StatusForbidden {
			return fmt.Errorf("%s: the credentials of the Landscaper cluster are refused: %w", what, err)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrUnreachable, what, err)
}

// kindOf names a resource as users know it, for messages.
func kindOf(gvr schema.GroupVersionResource) string {
	switch gvr {
	case installationsGVR:
		return "Installation"
	case targetsGVR:
		return "Target"
	case dataObjectsGVR:
		return "DataObject"
	case contextsGVR:
		return "Context"
	case executionsGVR:
		return "Execution"
	case deployItemsGVR:
		return "DeployItem"
	case overwritesGVR:
		return "ComponentVersionOverwrites"
	case secretsGVR:
		return "Secret"
	case configMapsGVR:
		return "ConfigMap"
	}
	return gvr.Resource
}

// get reads one object into out. why says who needs it, for the message of
// an object that is gone.
func (r *Reader) get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name, why string, out any) error {
	u, err := r.dynamic.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	what := fmt.Sprintf("%s %s/%s", kindOf(gvr), namespace, name)
	if why != "" {
		what += " (" + why + ")"
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: %w", what, ErrNotFound)
		}
		return r.callError(err, "reading "+what)
	}
	return decode(u.Object, out, what)
}

// list reads the objects of a namespace matching the label selector, in
// name order.
func (r *Reader) list(ctx context.Context, gvr schema.GroupVersionResource, namespace, selector string, each func(raw map[string]any) error) error {
	l, err := r.dynamic.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return r.callError(err, fmt.Sprintf("listing %ss in %s with %s", kindOf(gvr), namespace, selector))
	}
	items := l.Items
	slices.SortFunc(items, func(a, b unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
	for _, it := range items {
		if err := each(it.Object); err != nil {
			return err
		}
	}
	return nil
}

func decode(obj map[string]any, out any, what string) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s cannot be read as %s's API describes it: %w", what, GroupVersion, err)
	}
	return nil
}
