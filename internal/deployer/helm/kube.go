package helm

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// ManagedResource is Landscaper's managed resource status: an object a
// deploy item created and how it is treated on deletion.
type ManagedResource struct {
	AnnotateBeforeDelete map[string]string `json:"annotateBeforeDelete,omitempty"`
	PatchBeforeDelete    json.RawMessage   `json:"patchBeforeDelete,omitempty"`
	Policy               string            `json:"policy,omitempty"`
	Resource             ObjectReference   `json:"resource"`
}

// ObjectReference names one object.
type ObjectReference struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	UID        string `json:"uid,omitempty"`
}

// ApplyRequest is one apply of rendered manifests.
type ApplyRequest struct {
	// Objects in apply order, with the policy Landscaper gives each
	// ("manage", or "keep" for a namespace created for the release).
	Objects  []*unstructured.Unstructured
	Policies []string
	// DefaultNamespace is the release namespace.
	DefaultNamespace string
	// UpdateStrategy is "update" or "patch".
	UpdateStrategy string
	Labels         map[string]string
	// Previous are the objects of the last apply; those no longer rendered
	// are deleted, in DeletionGroupsDuringUpdate's order.
	Previous                   []ManagedResource
	DeletionGroupsDuringUpdate json.RawMessage
}

// Kube is the shared Kubernetes machinery the helm deployer uses for what
// the manifest deployer does too: applying objects, readiness checks,
// exports from objects and deletion in groups. Results that are not there
// yet come back as a non-empty pending text, not as an error.
type Kube interface {
	// Validate checks readinessChecks, deletionGroups and exports at plan time.
	Validate(readinessChecks, deletionGroups, deletionGroupsDuringUpdate json.RawMessage, exports []Export) error
	Apply(ctx context.Context, cfg *rest.Config, req ApplyRequest) ([]ManagedResource, error)
	// Ready runs the default and custom readiness checks over managed.
	// failOnMissing is false for helm releases, whose objects helm owns.
	Ready(ctx context.Context, cfg *rest.Config, readinessChecks json.RawMessage, managed []ManagedResource, failOnMissing bool) (pending string, err error)
	// Export reads the exports that have fromResource.
	Export(ctx context.Context, cfg *rest.Config, exports []Export) (values map[string]any, pending string, err error)
	// Delete deletes managed objects in deletionGroups' order.
	Delete(ctx context.Context, cfg *rest.Config, managed []ManagedResource, deletionGroups json.RawMessage) (pending string, err error)
}
