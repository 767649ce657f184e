package lscluster

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// The fields of Landscaper's v1alpha1 objects this package reads, decoded
// from their JSON (github.com/gardener/landscaper apis/core/v1alpha1). Only
// what a takeover needs is here; everything else is ignored.

const group = "landscaper.gardener.cloud"

// GroupVersion is the API the reader reads.
var GroupVersion = schema.GroupVersion{Group: group, Version: "v1alpha1"}

var (
	installationsGVR = GroupVersion.WithResource("installations")
	targetsGVR       = GroupVersion.WithResource("targets")
	dataObjectsGVR   = GroupVersion.WithResource("dataobjects")
	contextsGVR      = GroupVersion.WithResource("contexts")
	executionsGVR    = GroupVersion.WithResource("executions")
	deployItemsGVR   = GroupVersion.WithResource("deployitems")
	overwritesGVR    = GroupVersion.WithResource("componentversionoverwrites")
	secretsGVR       = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	configMapsGVR    = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespacesGVR    = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// Labels and annotations Landscaper's controllers write.
const (
	labelEncompassedBy    = group + "/encompassed-by"
	annotationSubinstName = group + "/subinstallation-name"
	labelDOContext        = "data." + group + "/context"
	labelDOSourceType     = "data." + group + "/sourceType"
	labelDOKey            = "data." + group + "/key"
	labelDOSource         = "data." + group + "/source"
	labelDOTargetMapKey   = "data." + group + "/targetmapkey"
	labelExecManagedBy    = "execution." + group + "/managed-by"
	labelExecItemName     = "execution." + group + "/name"
	sourceTypeImport      = "import"
	sourceTypeExport      = "export"
	installationSourcePfx = "Inst."
	nonContextifiedPrefix = "#"
	phaseSucceeded        = "Succeeded"
)

// The deployers' labels on the objects they manage; the value is the name
// of the DeployItem object.
const (
	ManifestManagedLabel = "manifest.deployer." + group + "/deployitem"
	HelmManagedLabel     = "helm.deployer." + group + "/deployitem"
)

// Deploy item types whose installed objects can be adopted.
const (
	TypeManifest = group + "/kubernetes-manifest"
	TypeHelm     = group + "/helm"
	// Mock items install nothing; running them anew changes nothing.
	typeMock = group + "/mock"
)

type lsInstallation struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              lsInstallationSpec   `json:"spec"`
	Status            lsInstallationStatus `json:"status"`
}

type lsInstallationSpec struct {
	Context      string `json:"context,omitempty"`
	Verification *struct {
		SignatureName string `json:"signatureName"`
	} `json:"verification,omitempty"`
	ComponentDescriptor *struct {
		Reference *lsComponentReference `json:"ref,omitempty"`
		Inline    *lsInlineDescriptor   `json:"inline,omitempty"`
	} `json:"componentDescriptor,omitempty"`
	Blueprint struct {
		Reference *struct {
			ResourceName string `json:"resourceName"`
		} `json:"ref,omitempty"`
		Inline *struct {
			Filesystem json.RawMessage `json:"filesystem"`
		} `json:"inline,omitempty"`
	} `json:"blueprint"`
	Imports struct {
		Data    []lsDataImport   `json:"data,omitempty"`
		Targets []lsTargetImport `json:"targets,omitempty"`
	} `json:"imports"`
	ImportDataMappings map[string]json.RawMessage `json:"importDataMappings,omitempty"`
	Exports            struct {
		Data    []lsDataExport   `json:"data,omitempty"`
		Targets []lsTargetExport `json:"targets,omitempty"`
	} `json:"exports"`
	ExportDataMappings map[string]json.RawMessage `json:"exportDataMappings,omitempty"`
	AutomaticReconcile json.RawMessage            `json:"automaticReconcile,omitempty"`
}

type lsComponentReference struct {
	RepositoryContext map[string]any `json:"repositoryContext,omitempty"`
	ComponentName     string         `json:"componentName"`
	Version           string         `json:"version"`
}

// lsInlineDescriptor is the part of an inline (legacy v2) component
// descriptor that names the component and where it lives.
type lsInlineDescriptor struct {
	Component struct {
		Name               string           `json:"name"`
		Version            string           `json:"version"`
		RepositoryContexts []map[string]any `json:"repositoryContexts"`
	} `json:"component"`
}

type lsDataImport struct {
	Name         string      `json:"name"`
	DataRef      string      `json:"dataRef,omitempty"`
	SecretRef    *lsLocalRef `json:"secretRef,omitempty"`
	ConfigMapRef *lsLocalRef `json:"configMapRef,omitempty"`
}

type lsLocalRef struct {
	Name string `json:"name"`
	Key  string `json:"key,omitempty"`
}

type lsTargetImport struct {
	Name                string            `json:"name"`
	Target              string            `json:"target,omitempty"`
	Targets             []string          `json:"targets"`
	TargetListReference string            `json:"targetListRef,omitempty"`
	TargetMap           map[string]string `json:"targetMap,omitempty"`
	TargetMapReference  string            `json:"targetMapRef,omitempty"`
}

type lsDataExport struct {
	Name    string `json:"name"`
	DataRef string `json:"dataRef"`
}

type lsTargetExport struct {
	Name   string `json:"name"`
	Target string `json:"target,omitempty"`
}

type lsObjectRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

type lsInstallationStatus struct {
	Phase         string       `json:"phase,omitempty"`
	JobID         string       `json:"jobID,omitempty"`
	JobIDFinished string       `json:"jobIDFinished,omitempty"`
	LastError     *lsError     `json:"lastError,omitempty"`
	ExecutionRef  *lsObjectRef `json:"executionRef,omitempty"`
	SubInstCache  *struct {
		ActiveSubs []struct {
			SpecName   string `json:"specName,omitempty"`
			ObjectName string `json:"objectName,omitempty"`
		} `json:"activeSubs,omitempty"`
	} `json:"subInstCache,omitempty"`
}

type lsContext struct {
	metav1.ObjectMeta   `json:"metadata"`
	RepositoryContext   map[string]any `json:"repositoryContext,omitempty"`
	RegistryPullSecrets []lsObjectRef  `json:"registryPullSecrets,omitempty"`
	OCMConfig           *lsObjectRef   `json:"ocmConfig,omitempty"`
	// The overwrites' name; Landscaper applies them to the component
	// reference.
	ComponentVersionOverwrites string                     `json:"componentVersionOverwrites,omitempty"`
	VerificationSignatures     map[string]json.RawMessage `json:"verificationSignatures,omitempty"`
	// Configurations hold deployer settings by name; Landscaper's helm
	// deployer reads helmChartRepoCredentials from them.
	Configurations map[string]json.RawMessage `json:"configurations,omitempty"`
}

type lsOverwrites struct {
	metav1.ObjectMeta `json:"metadata"`
	Overwrites        []struct {
		Source       ocm.OverwriteRef `json:"source"`
		Substitution ocm.OverwriteRef `json:"substitution"`
	} `json:"overwrites,omitempty"`
}

type lsTarget struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Type      string          `json:"type"`
		Config    json.RawMessage `json:"config,omitempty"`
		SecretRef *lsLocalRef     `json:"secretRef,omitempty"`
	} `json:"spec"`
}

type lsDataObject struct {
	metav1.ObjectMeta `json:"metadata"`
	Data              json.RawMessage `json:"data"`
}

type lsExecution struct {
	metav1.ObjectMeta `json:"metadata"`
	Status            struct {
		Phase           string `json:"phase,omitempty"`
		DeployItemCache *struct {
			ActiveDIs []struct {
				SpecName   string `json:"specName,omitempty"`
				ObjectName string `json:"objectName,omitempty"`
			} `json:"activeDIs,omitempty"`
		} `json:"deployItemCache,omitempty"`
	} `json:"status"`
}

type lsDeployItem struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Type   string          `json:"type"`
		Target *lsObjectRef    `json:"target,omitempty"`
		Config json.RawMessage `json:"config,omitempty"`
	} `json:"spec"`
	Status struct {
		Phase          string          `json:"phase,omitempty"`
		JobID          string          `json:"jobID,omitempty"`
		JobIDFinished  string          `json:"jobIDFinished,omitempty"`
		LastError      *lsError        `json:"lastError,omitempty"`
		ProviderStatus json.RawMessage `json:"providerStatus,omitempty"`
	} `json:"status"`
}

// lsError is Landscaper's error in a status: what was done, why it failed,
// and its error codes.
type lsError struct {
	Operation string   `json:"operation,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	Message   string   `json:"message,omitempty"`
	Codes     []string `json:"codes,omitempty"`
}
