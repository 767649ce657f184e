// Package kube holds the machinery that Landscaper's Kubernetes deployers
// (kubernetes-manifest, and helm in its manifest mode) share: Landscaper's
// configuration types for managed manifests, readiness checks, exports and
// deletion groups; applying manifests in Landscaper's order with its update
// strategies and policies; deleting in deletion groups; readiness checks;
// exports read by JSONPath; drift detection; and the classification of
// Kubernetes API errors into transient and terminal core errors.
//
// The high-level entry points are Reconcile, Delete and Drift, which keep
// their progress in State so a deployer can hand it to the engine between
// calls. The lower-level pieces (Applier, CheckReadiness, Export, ...) are
// exported for deployers that need a different flow.
package kube

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Policy is Landscaper's ManifestPolicy: what the deployer may do with an
// object.
type Policy string

// Policies.
const (
	// PolicyManage creates, updates and deletes the object, taking it over
	// if it already exists. The default.
	PolicyManage Policy = "manage"
	// PolicyFallback is manage, except that an existing object labelled
	// as managed by another deploy item is left alone.
	PolicyFallback Policy = "fallback"
	// PolicyKeep creates and updates the object but never deletes it.
	PolicyKeep Policy = "keep"
	// PolicyIgnore does nothing with the object.
	PolicyIgnore Policy = "ignore"
	// PolicyImmutable creates and deletes the object but never updates it.
	PolicyImmutable Policy = "immutable"
)

// Valid reports whether p is one of Landscaper's policies (or empty, which
// means manage).
func (p Policy) Valid() bool {
	switch p {
	case "", PolicyManage, PolicyFallback, PolicyKeep, PolicyIgnore, PolicyImmutable:
		return true
	}
	return false
}

// UpdateStrategy is how an object that already exists is updated.
type UpdateStrategy string

// Update strategies, as Landscaper implements them.
const (
	// StrategyUpdate replaces the object (PUT) with the manifest, keeping
	// only the live resourceVersion and the fields the API server requires
	// to be unchanged (a Service's clusterIP, a Job's selector, ...).
	StrategyUpdate UpdateStrategy = "update"
	// StrategyPatch sends a JSON merge patch computed from the live object
	// to the manifest (with the same kept fields as update): fields absent
	// from the manifest are removed.
	StrategyPatch UpdateStrategy = "patch"
	// StrategyMerge deep-merges the manifest into the live object without
	// overwriting fields the live object already has, then replaces it.
	StrategyMerge UpdateStrategy = "merge"
	// StrategyMergeOverwrite deep-merges the manifest into the live object,
	// overwriting fields with the manifest's non-empty values, then
	// replaces it.
	StrategyMergeOverwrite UpdateStrategy = "mergeOverwrite"
)

// Valid reports whether s is a known strategy (or empty, which means
// update).
func (s UpdateStrategy) Valid() bool {
	switch s {
	case "", StrategyUpdate, StrategyPatch, StrategyMerge, StrategyMergeOverwrite:
		return true
	}
	return false
}

// Manifest is Landscaper's managedresource.Manifest: one object (or a
// v1 List of objects) with its policy and hooks.
type Manifest struct {
	Policy Policy `json:"policy,omitempty"`
	// Manifest is the object as JSON.
	Manifest json.RawMessage `json:"manifest,omitempty"`
	// AnnotateBeforeCreate is added to the object's annotations when it is
	// created (not when it is updated).
	AnnotateBeforeCreate map[string]string `json:"annotateBeforeCreate,omitempty"`
	// AnnotateBeforeDelete is added to the object's annotations before it
	// is deleted.
	AnnotateBeforeDelete map[string]string `json:"annotateBeforeDelete,omitempty"`
	// PatchAfterDeployment is merged (overwriting) into the object after
	// every manifest was applied, the readiness checks passed and the
	// exports were read.
	PatchAfterDeployment json.RawMessage `json:"patchAfterDeployment,omitempty"`
	// PatchBeforeDelete is merged (overwriting) into the object before it
	// is deleted.
	PatchBeforeDelete json.RawMessage `json:"patchBeforeDelete,omitempty"`
}

// ManagedResourceStatus is Landscaper's record of one object a deploy item
// manages. It never holds an object's content, only its reference and the
// hooks that run when it is deleted.
type ManagedResourceStatus struct {
	AnnotateBeforeDelete map[string]string      `json:"annotateBeforeDelete,omitempty"`
	PatchBeforeDelete    json.RawMessage        `json:"patchBeforeDelete,omitempty"`
	Policy               Policy                 `json:"policy,omitempty"`
	Resource             corev1.ObjectReference `json:"resource"`
}

// ManagedResourceStatusList is the list of a deploy item's objects, in the
// order they were applied.
type ManagedResourceStatusList []ManagedResourceStatus

// ForStatus returns the list as it may be shown to users: a Secret's
// patchBeforeDelete may hold secret data, so it is left out.
func (l ManagedResourceStatusList) ForStatus() ManagedResourceStatusList {
	out := make(ManagedResourceStatusList, len(l))
	for i, mr := range l {
		out[i] = mr
		if mr.Resource.Kind == "Secret" && mr.Resource.APIVersion == "v1" {
			out[i].PatchBeforeDelete = nil
		}
	}
	return out
}

// TypedObjectReference is Landscaper's reference to an object of a kind.
type TypedObjectReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
}

// GroupVersionKind returns the reference's kind.
func (r TypedObjectReference) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(r.APIVersion, r.Kind)
}

func (r TypedObjectReference) String() string {
	if r.Namespace == "" {
		return fmt.Sprintf("%s %s %s", r.APIVersion, r.Kind, r.Name)
	}
	return fmt.Sprintf("%s %s %s/%s", r.APIVersion, r.Kind, r.Namespace, r.Name)
}

// ReadinessCheckConfiguration is Landscaper's readinessChecks.
type ReadinessCheckConfiguration struct {
	// DisableDefault turns off the default checks of built-in workload
	// kinds.
	DisableDefault bool `json:"disableDefault,omitempty"`
	// Timeout is accepted from configs written for older Landscaper
	// versions, which bounded the readiness checks with it; newer ones use
	// only the deploy item's timeout. When set it bounds the checks too.
	Timeout *Duration `json:"timeout,omitempty"`
	// CustomReadinessChecks are checks of fields of selected objects.
	CustomReadinessChecks []CustomReadinessCheckConfiguration `json:"custom,omitempty"`
}

// CustomReadinessCheckConfiguration is one custom readiness check.
type CustomReadinessCheckConfiguration struct {
	Name string `json:"name"`
	// Timeout: see ReadinessCheckConfiguration.Timeout.
	Timeout       *Duration              `json:"timeout,omitempty"`
	Disabled      bool                   `json:"disabled,omitempty"`
	Resource      []TypedObjectReference `json:"resourceSelector,omitempty"`
	LabelSelector *LabelSelectorSpec     `json:"labelSelector,omitempty"`
	Requirements  []RequirementSpec      `json:"requirements"`
	// TargetName names another target to read the objects from. This
	// provider has no target imports to resolve it against, so a check
	// that sets it is rejected by Validate.
	TargetName *string `json:"targetName,omitempty"`
}

// LabelSelectorSpec selects objects of one kind by labels.
type LabelSelectorSpec struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Labels     map[string]string `json:"matchLabels"`
}

// Operator is a requirement's comparison, spelled as Kubernetes' selection
// operators.
type Operator string

// Operators Landscaper allows in requirements.
const (
	OpDoesNotExist Operator = "!"
	OpExists       Operator = "exists"
	OpEquals       Operator = "="
	OpDoubleEquals Operator = "=="
	OpNotEquals    Operator = "!="
	OpIn           Operator = "in"
	OpNotIn        Operator = "notin"
)

// RequirementSpec is a condition on the fields a JSONPath selects.
type RequirementSpec struct {
	JSONPath string   `json:"jsonPath"`
	Operator Operator `json:"operator"`
	// Values are objects of the form {"value": X}.
	Values []json.RawMessage `json:"values,omitempty"`
}

// Exports is Landscaper's exports block.
type Exports struct {
	Exports []Export `json:"exports,omitempty"`
}

// Export reads one value from a deployed object.
type Export struct {
	// Key is where the value goes in the export, as a dotted path.
	Key string `json:"key"`
	// JSONPath selects the value in the object (without braces).
	JSONPath string `json:"jsonPath"`
	// FromResource is the object to read. Exports without it are not read
	// from the cluster (the helm deployer reads them from its values).
	FromResource *TypedObjectReference `json:"fromResource,omitempty"`
	// FromObjectReference makes JSONPath select a reference ({name,
	// namespace}) to another object, read with its own JSONPath.
	FromObjectReference *FromObjectReference `json:"fromObjectRef,omitempty"`
	// TargetName: see CustomReadinessCheckConfiguration.TargetName.
	TargetName *string `json:"targetName,omitempty"`
}

// FromObjectReference is the kind and JSONPath of an object referenced by
// an export's first object.
type FromObjectReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	JSONPath   string `json:"jsonPath"`
}

// DeletionGroupDefinition is one step of the order of deletion.
type DeletionGroupDefinition struct {
	PredefinedResourceGroup *PredefinedResourceGroup `json:"predefinedResourceGroup,omitempty"`
	CustomResourceGroup     *CustomResourceGroup     `json:"customResourceGroup,omitempty"`
}

// PredefinedResourceGroupType names a predefined deletion group.
type PredefinedResourceGroupType string

// Predefined deletion groups.
const (
	GroupNamespacedResources    PredefinedResourceGroupType = "namespaced-resources"
	GroupClusterScopedResources PredefinedResourceGroupType = "cluster-scoped-resources"
	GroupCRDs                   PredefinedResourceGroupType = "crds"
	GroupEmpty                  PredefinedResourceGroupType = "empty"
)

// PredefinedResourceGroup is a deletion group of a predefined kind.
type PredefinedResourceGroup struct {
	Type PredefinedResourceGroupType `json:"type,omitempty"`
	// ForceDelete removes the finalizers of the group's objects after
	// deleting them.
	ForceDelete bool `json:"forceDelete,omitempty"`
}

// CustomResourceGroup is a deletion group of listed resource types.
type CustomResourceGroup struct {
	Resources   []ResourceType `json:"resources,omitempty"`
	ForceDelete bool           `json:"forceDelete,omitempty"`
	// DeleteAllResources deletes every object of the listed types in the
	// cluster, not only managed ones.
	DeleteAllResources bool `json:"deleteAllResources,omitempty"`
	// TargetName: see CustomReadinessCheckConfiguration.TargetName.
	TargetName *string `json:"targetName,omitempty"`
}

// ResourceType selects objects by kind and, optionally, names and
// namespaces.
type ResourceType struct {
	APIVersion string   `json:"apiVersion,omitempty"`
	Kind       string   `json:"kind,omitempty"`
	Names      []string `json:"names,omitempty"`
	Namespaces []string `json:"namespaces,omitempty"`
}

// defaultDeletionGroups is Landscaper's default order of deletion:
// namespaced objects, then cluster-scoped ones, then CRDs, so no object
// outlives the namespace or the CRD it lives in.
func defaultDeletionGroups() []DeletionGroupDefinition {
	return []DeletionGroupDefinition{
		{PredefinedResourceGroup: &PredefinedResourceGroup{Type: GroupNamespacedResources}},
		{PredefinedResourceGroup: &PredefinedResourceGroup{Type: GroupClusterScopedResources}},
		{PredefinedResourceGroup: &PredefinedResourceGroup{Type: GroupCRDs}},
	}
}
