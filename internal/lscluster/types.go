package lscluster

import (
	"encoding/json"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// Installation describes a root Installation of a Landscaper resource
// cluster as landscaper_installation needs it.
type Installation struct {
	Namespace string
	Name      string
	// Phase is the Installation's status.phase.
	Phase string

	Blueprint Blueprint
	// Component is nil when the Installation names no component.
	Component *Component
	// Verification is the signature the component is verified with; empty
	// for none.
	Verification string
	// ComponentOverwrites are those of the Context's
	// ComponentVersionOverwrites: Landscaper applies them to the component
	// reference (Component already has them applied) and to every
	// component it references; the provider's component_overwrites do the
	// latter.
	ComponentOverwrites []ocm.Overwrite

	// Imports holds spec.imports.data and what spec.importDataMappings
	// produce, by name. A mapping replaces a data import of its name, as in
	// Landscaper. Imports the blueprint does not declare (a mapping's
	// inputs, typically) are here too: only the blueprint can tell.
	Imports map[string]Import
	// Targets holds spec.imports.targets by import name.
	Targets map[string]TargetImport

	// Exports holds spec.exports.data by the blueprint's export name.
	Exports map[string]Export
	// TargetExports holds spec.exports.targets by the blueprint's export
	// name.
	TargetExports map[string]TargetExport

	// Execution is the Installation's own Execution; nil when it has none.
	Execution *Execution
	// Subinstallations by their name in the blueprint.
	Subinstallations map[string]*Subinstallation

	// Warnings name what was read but cannot be taken over as it is.
	Warnings []string
}

// Blueprint is where the blueprint comes from: a resource of the component
// (Ref) or inline files (Filesystem, by slash-separated path).
type Blueprint struct {
	Ref        string
	Filesystem map[string]string
}

// Component is the component reference with its repository context, from
// spec.componentDescriptor.ref or, where that has none, from the Context.
type Component struct {
	Name    string
	Version string
	// RepositoryContext is Landscaper's repositoryContext object verbatim
	// (type, baseUrl, ...); nil when neither the Installation nor its
	// Context has one.
	RepositoryContext map[string]any
	// RepositoryContextFrom says where RepositoryContext was found, for
	// messages: "spec.componentDescriptor.ref" or `Context "<name>"`.
	RepositoryContextFrom string
	// Overwritten is the reference as the Installation wrote it when
	// ComponentOverwrites changed it; nil otherwise.
	Overwritten *ocm.Ref
}

// Source kinds of an import.
const (
	SourceDataObject = "DataObject"
	SourceSecret     = "Secret"
	SourceConfigMap  = "ConfigMap"
	SourceMapping    = "importDataMappings"
)

// Import is one data import's value.
type Import struct {
	// Value is plain data as encoding/json decodes it.
	Value any
	// Sensitive is true for a Secret's data, and for a mapping whose
	// value carries a Secret's or a Target config's values.
	Sensitive bool
	// Source is one of the Source constants; Object names the object read
	// ("namespace/name", plus "#key" where a key was given), empty for a
	// mapping.
	Source string
	Object string
}

// TargetImport is one target import: exactly one of Target, List and Map
// is set.
type TargetImport struct {
	Target *TargetRef
	List   []TargetRef
	Map    map[string]TargetRef
}

// TargetRef names a Target, never its config.
type TargetRef struct {
	// Name is the name the Installation uses (spec.imports.targets); for a
	// root installation it is the Target's name, the name a provider
	// target should get.
	Name string
	// Object is the Target object's name.
	Object string
	// Type is the Target's spec.type.
	Type string
}

// Export is one data export and its value, from the export DataObject the
// Installation wrote.
type Export struct {
	// DataRef is the name of the DataObject the export is written to.
	DataRef string
	// Value is the DataObject's data when Known.
	Value any
	Known bool
}

// TargetExport is one target export: the Target object it is written to.
type TargetExport struct {
	// Target is the name the Installation exports it as; Object the
	// Target object's name; Type its type when the object exists.
	Target string
	Object string
	Type   string
}

// Subinstallation is an Installation Landscaper created for a blueprint's
// sub-installation, with what is below it.
type Subinstallation struct {
	// Name is the sub-installation's name in the parent's blueprint.
	Name string
	// Object is the Installation object's name.
	Object           string
	Phase            string
	LastError        *Error
	Blueprint        Blueprint
	Execution        *Execution
	Subinstallations map[string]*Subinstallation
}

// Execution is an installation's Execution with its deploy items by their
// name in the blueprint's deployExecutions.
type Execution struct {
	Object      string
	Phase       string
	DeployItems map[string]DeployItem
}

// DeployItem is what adopting a deploy item needs: whose label the
// deployer put on the objects it installed, and what they are.
type DeployItem struct {
	// Object is the DeployItem object's name: the value of the deployer's
	// managed label (ManagedLabel) on every object it installed.
	Object string
	Type   string
	// Config is the item's deployer configuration as Landscaper rendered
	// it, which tells what the item reads (a Secret it exports from).
	Config json.RawMessage
	// Target is the name of the Target object the item deploys to.
	Target string
	Phase  string
	// JobIDFinished is the job the item last finished; LastError the
	// error of its last run, nil after a success.
	JobIDFinished string
	LastError     *Error
	// ManagedLabel is the label key the item's deployer marks objects
	// with; empty for deployer types this package does not know.
	ManagedLabel string
	// ManagedResources are the objects the deployer recorded in its
	// provider status as managed.
	ManagedResources []ObjectRef
	// Release is the helm release of a helm item that installs with helm
	// (helmDeployment not false); nil otherwise.
	Release *HelmRelease
}

// ObjectRef names a Kubernetes object.
type ObjectRef struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
}

// HelmRelease names a helm release.
type HelmRelease struct {
	Name      string
	Namespace string
}

// Error is an error as Landscaper's controllers record it in a status.
type Error struct {
	Operation string
	Reason    string
	Message   string
	Codes     []string
}

func (e *lsError) plain() *Error {
	if e == nil {
		return nil
	}
	return &Error{Operation: e.Operation, Reason: e.Reason, Message: e.Message, Codes: e.Codes}
}
