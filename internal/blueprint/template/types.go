package template

import (
	"io/fs"
	"time"
)

// Kind selects which list of blueprint executions is rendered. It decides the
// bindings a template sees, the key its result is read from, and how results of
// several executions are merged.
type Kind string

const (
	// KindDeploy renders deployExecutions; the result is read from deployItems.
	KindDeploy Kind = "deploy"
	// KindExport renders exportExecutions; the result is read from exports.
	KindExport Kind = "export"
	// KindImport renders importExecutions; the result is read from bindings and errors.
	KindImport Kind = "import"
	// KindSubinstallation renders subinstallationExecutions; the result is read
	// from subinstallations.
	KindSubinstallation Kind = "subinstallation"
)

// Template engine names as written in a blueprint's execution type field.
const (
	TypeGoTemplate = "GoTemplate"
	TypeSpiff      = "Spiff"
)

// Execution is one entry of a blueprint's execution list.
type Execution struct {
	// Name identifies the execution in errors and keys its persisted state.
	Name string
	// Type is TypeGoTemplate or TypeSpiff.
	Type string
	// Template is the inline template. GoTemplate needs a string; Spiff takes a
	// string (YAML text) or a structured value (maps, lists, scalars).
	Template any
	// File is a path in the blueprint's files, used when Template is nil.
	File string
}

// Components resolves the content of a component resource. component and
// resource are the maps of the component descriptor (in the schema version
// given to Render) that getResourceContent resolved a reference to.
// mediaType "application/octet-stream" makes the content base64 encoded in the
// template, as Landscaper does; anything else is passed as text.
type Components interface {
	ResourceContent(component map[string]any, resource map[string]any) (data []byte, mediaType string, err error)
}

// Cluster provides the template functions that need access to a cluster. All
// kubeconfigs are returned base64 encoded, as Landscaper's functions return
// them. target is the Target object passed to the function.
type Cluster interface {
	ShootAdminKubeconfig(shootName, shootNamespace string, expirationSeconds int64, target map[string]any) (kubeconfig string, expires time.Time, err error)
	ServiceAccountKubeconfig(name, namespace string, expirationSeconds int64, target map[string]any) (kubeconfig string, expires time.Time, err error)
	OIDCKubeconfig(issuerURL, clientID string, target map[string]any) (kubeconfig string, err error)
}

// Input holds everything an execution list is rendered with. Values are plain
// JSON-like data; Render copies them, so templates never modify the caller's
// maps.
type Input struct {
	// Imports is bound as "imports": data imports by name; target imports as
	// Target objects {apiVersion, kind: Target, metadata: {name, namespace},
	// spec: {type, config}} (see TargetObject); target lists as lists and
	// target maps as maps of them.
	Imports map[string]any
	// ComponentDescriptor is bound as "cd" and is the default component of
	// getResource, getResources and getComponent. Nil means no component.
	ComponentDescriptor map[string]any
	// ComponentList holds the root component and all components it references
	// transitively, in the same schema version as ComponentDescriptor. It is
	// bound as "components" and resolves getComponent and resource references.
	ComponentList []map[string]any
	// BlueprintDef is the installation's blueprint reference (spec.blueprint),
	// bound as "blueprint" and "blueprintDef" when not nil.
	BlueprintDef map[string]any
	// ComponentDescriptorDef is the installation's component reference
	// (spec.componentDescriptor), bound as "componentDescriptorDef" when not nil.
	ComponentDescriptorDef map[string]any
	// Exports is used by KindExport only: the map with the keys deployitems
	// (exports of each deploy item by item name), dataobjects and targets
	// (by export key). It is bound as "values" and each key also at the top
	// level.
	Exports map[string]any
	// State is the state persisted by earlier renders, by StateKey. Missing
	// entries mean no state yet.
	State map[string][]byte
	// Files is the blueprint's file tree (readFile, readDir, include, file
	// executions, Spiff's file functions). Nil means no files.
	Files fs.FS
	// Resolver gives getResourceContent access to resource content; nil makes
	// getResourceContent fail with a clear error.
	Resolver Components
	// Cluster serves the kubeconfig functions; nil makes them fail with a
	// clear error.
	Cluster Cluster
}

// Output is the merged result of an execution list. Only the fields of the
// rendered Kind are set.
type Output struct {
	// DeployItems (KindDeploy) in execution order, as maps with the keys name,
	// type, target ({import, key?, index?} or {name}), config, dependsOn,
	// timeout, updateOnChangeOnly, labels, onDelete.
	DeployItems []map[string]any
	// Subinstallations (KindSubinstallation) are InstallationTemplate maps.
	Subinstallations []map[string]any
	// Exports (KindExport) by export name, deep-merged over all executions.
	Exports map[string]any
	// Bindings (KindImport) are the additional imports produced.
	Bindings map[string]any
	// Errors (KindImport) are the validation messages of the first execution
	// that reported any; later executions are not rendered.
	Errors []string
	// State holds the state written by this render, by StateKey. The caller
	// persists these entries (replacing older ones) and passes them back in
	// Input.State next time.
	State map[string][]byte
}

// StateKey is the key an execution's state is persisted under. Landscaper
// keeps one state per execution name, shared between deploy and
// subinstallation executions and separate for export executions.
func StateKey(kind Kind, executionName string) string {
	if kind == KindExport {
		return "export" + executionName
	}
	return "deploy" + executionName
}

// TargetObject builds a target import value as templates see it in Landscaper:
// the serialized Target resource. Cluster-assigned metadata (uid, timestamps)
// does not exist here and is left out.
func TargetObject(name, namespace, targetType string, config any) map[string]any {
	return TargetObjectWithMeta(name, namespace, nil, nil, targetType, config)
}

// TargetObjectWithMeta is TargetObject with labels and annotations, which
// templates select targets by.
func TargetObjectWithMeta(name, namespace string, labels, annotations map[string]string, targetType string, config any) map[string]any {
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	for k, m := range map[string]map[string]string{"labels": labels, "annotations": annotations} {
		if len(m) > 0 {
			vals := make(map[string]any, len(m))
			for key, v := range m {
				vals[key] = v
			}
			meta[k] = vals
		}
	}
	spec := map[string]any{"type": targetType}
	if config != nil {
		spec["config"] = config
	}
	return map[string]any{
		"apiVersion": "landscaper.gardener.cloud/v1alpha1",
		"kind":       "Target",
		"metadata":   meta,
		"spec":       spec,
	}
}
