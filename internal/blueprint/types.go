// Package blueprint loads Landscaper blueprints (blueprint.yaml, its
// subinstallation templates and execution files) from a directory, from
// in-memory files, from an archive or from a component resource; validates
// values against blueprint JSON schemas (with local://, blueprint:// and
// cd:// references); and checks the imports given to a blueprint.
//
// The types mirror Landscaper's landscaper.gardener.cloud/v1alpha1 API field
// for field. Template execution lives elsewhere.
package blueprint

import (
	"encoding/json"
)

// API group and kinds of the files read here.
const (
	APIVersion               = "landscaper.gardener.cloud/v1alpha1"
	KindBlueprint            = "Blueprint"
	KindInstallationTemplate = "InstallationTemplate"
	BlueprintFileName        = "blueprint.yaml"
	landscaperDomain         = "landscaper.gardener.cloud"
)

// ImportType is the type of an import.
type ImportType string

// Import and export types.
const (
	ImportTypeData       ImportType = "data"
	ImportTypeTarget     ImportType = "target"
	ImportTypeTargetList ImportType = "targetList"
	ImportTypeTargetMap  ImportType = "targetMap"
)

// ExportType is the type of an export: data or target.
type ExportType string

// Export types.
const (
	ExportTypeData   ExportType = "data"
	ExportTypeTarget ExportType = "target"
)

// TemplateType names a template engine.
type TemplateType string

// Template engines Landscaper knows.
const (
	TemplateTypeGoTemplate TemplateType = "GoTemplate"
	TemplateTypeSpiff      TemplateType = "Spiff"
)

// Definition is the content of blueprint.yaml.
type Definition struct {
	APIVersion  string            `json:"apiVersion,omitempty"`
	Kind        string            `json:"kind,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// JSONSchemaVersion names the JSON schema draft of the blueprint's
	// schemas.
	JSONSchemaVersion string `json:"jsonSchemaVersion,omitempty"`
	// JSONSchema is what Landscaper's own examples write instead of
	// jsonSchemaVersion. Landscaper decodes leniently and ignores it; it is
	// accepted here so those files keep loading under strict decoding, and
	// it is used as the draft when jsonSchemaVersion is empty.
	JSONSchema                string                     `json:"jsonSchema,omitempty"`
	LocalTypes                map[string]json.RawMessage `json:"localTypes,omitempty"`
	Imports                   []ImportDefinition         `json:"imports,omitempty"`
	ImportExecutions          []TemplateExecutor         `json:"importExecutions,omitempty"`
	Exports                   []ExportDefinition         `json:"exports,omitempty"`
	Subinstallations          []SubinstallationTemplate  `json:"subinstallations,omitempty"`
	SubinstallationExecutions []TemplateExecutor         `json:"subinstallationExecutions,omitempty"`
	DeployExecutions          []TemplateExecutor         `json:"deployExecutions,omitempty"`
	ExportExecutions          []TemplateExecutor         `json:"exportExecutions,omitempty"`
}

// ImportDefinition declares an import of a blueprint.
type ImportDefinition struct {
	Name       string          `json:"name"`
	Schema     json.RawMessage `json:"schema,omitempty"`
	TargetType string          `json:"targetType,omitempty"`
	Type       ImportType      `json:"type,omitempty"`
	// Required defaults to true (Landscaper's default).
	Required *bool `json:"required,omitempty"`
	// Default is used only for an optional data import that is not given.
	Default *Default `json:"default,omitempty"`
	// ConditionalImports are considered only when this import is satisfied.
	ConditionalImports []ImportDefinition `json:"imports,omitempty"`
}

// IsRequired applies Landscaper's default of true.
func (d *ImportDefinition) IsRequired() bool { return d.Required == nil || *d.Required }

// Default holds the default value of an import.
type Default struct {
	Value json.RawMessage `json:"value"`
}

// ExportDefinition declares an export of a blueprint.
type ExportDefinition struct {
	Name       string          `json:"name"`
	Schema     json.RawMessage `json:"schema,omitempty"`
	TargetType string          `json:"targetType,omitempty"`
	Type       ExportType      `json:"type,omitempty"`
}

// TemplateExecutor is an import, deploy, export or subinstallation
// execution. Template is a string for GoTemplate and any value for Spiff;
// it wins over File, as in Landscaper.
type TemplateExecutor struct {
	Name     string          `json:"name"`
	Type     TemplateType    `json:"type"`
	File     string          `json:"file,omitempty"`
	Template json.RawMessage `json:"template,omitempty"`
}

// SubinstallationTemplate is an entry of subinstallations: a file in the
// blueprint or an inline installation template.
type SubinstallationTemplate struct {
	File                  string `json:"file,omitempty"`
	*InstallationTemplate `json:",inline"`
}

// UnmarshalJSON splits the entry into file and inline template; an entry
// with only file leaves InstallationTemplate nil.
func (s *SubinstallationTemplate) UnmarshalJSON(data []byte) error {
	var head map[string]json.RawMessage
	if err := json.Unmarshal(data, &head); err != nil {
		return err
	}
	var out SubinstallationTemplate
	if f, ok := head["file"]; ok {
		if err := json.Unmarshal(f, &out.File); err != nil {
			return err
		}
		delete(head, "file")
	}
	if len(head) > 0 {
		rest, err := json.Marshal(head)
		if err != nil {
			return err
		}
		var it InstallationTemplate
		if err := strictJSON(rest, &it); err != nil {
			return err
		}
		out.InstallationTemplate = &it
	}
	*s = out
	return nil
}

// MarshalJSON writes the entry back in its flat form.
func (s SubinstallationTemplate) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	if s.InstallationTemplate != nil {
		data, err := json.Marshal(s.InstallationTemplate)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, err
		}
	}
	if s.File != "" {
		m["file"] = s.File
	}
	return json.Marshal(m)
}

// InstallationTemplate describes a subinstallation.
type InstallationTemplate struct {
	APIVersion         string                     `json:"apiVersion,omitempty"`
	Kind               string                     `json:"kind,omitempty"`
	Name               string                     `json:"name"`
	Blueprint          TemplateBlueprint          `json:"blueprint"`
	Imports            InstallationImports        `json:"imports,omitempty"`
	ImportDataMappings map[string]json.RawMessage `json:"importDataMappings,omitempty"`
	Exports            InstallationExports        `json:"exports,omitempty"`
	ExportDataMappings map[string]json.RawMessage `json:"exportDataMappings,omitempty"`
	Optimization       *Optimization              `json:"optimization,omitempty"`
}

// TemplateBlueprint references the blueprint of a subinstallation: a cd://
// URI (or a resource name of the parent's component) or an inline
// filesystem (file name to content, directories as nested maps).
type TemplateBlueprint struct {
	Ref        string          `json:"ref,omitempty"`
	Filesystem json.RawMessage `json:"filesystem,omitempty"`
}

// Optimization mirrors Landscaper's performance settings; accepted, unused.
type Optimization struct {
	HasNoSiblingImports bool `json:"hasNoSiblingImports,omitempty"`
	HasNoSiblingExports bool `json:"hasNoSiblingExports,omitempty"`
}

// InstallationImports are the imports of an installation.
type InstallationImports struct {
	Data    []DataImport   `json:"data,omitempty"`
	Targets []TargetImport `json:"targets,omitempty"`
}

// InstallationExports are the exports of an installation.
type InstallationExports struct {
	Data    []DataExport   `json:"data,omitempty"`
	Targets []TargetExport `json:"targets,omitempty"`
}

// DataImport imports a data object.
type DataImport struct {
	Name         string        `json:"name"`
	DataRef      string        `json:"dataRef,omitempty"`
	Version      string        `json:"version,omitempty"`
	SecretRef    *ObjectKeyRef `json:"secretRef,omitempty"`
	ConfigMapRef *ObjectKeyRef `json:"configMapRef,omitempty"`
}

// ObjectKeyRef is Landscaper's local secret or config map reference.
type ObjectKeyRef struct {
	Name string `json:"name"`
	Key  string `json:"key,omitempty"`
}

// TargetImport imports a target, a list of targets or a map of targets.
type TargetImport struct {
	Name                string            `json:"name"`
	Target              string            `json:"target,omitempty"`
	Targets             []string          `json:"targets,omitempty"`
	TargetListReference string            `json:"targetListRef,omitempty"`
	TargetMap           map[string]string `json:"targetMap,omitempty"`
	TargetMapReference  string            `json:"targetMapRef,omitempty"`
}

// DataExport exports a data object.
type DataExport struct {
	Name    string `json:"name"`
	DataRef string `json:"dataRef"`
}

// TargetExport exports a target.
type TargetExport struct {
	Name   string `json:"name"`
	Target string `json:"target,omitempty"`
}
