package helm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ociregistry"
)

// APIVersion and Kind of the provider configuration, as Landscaper names
// them. Both are optional in a config; when present they must match.
const (
	APIVersion = "helm.deployer.landscaper.gardener.cloud/v1alpha1"
	Kind       = "ProviderConfiguration"
)

// Type is Landscaper's deploy item type of the helm deployer; Alias is the
// short name this provider also accepts.
const (
	Type  = "landscaper.gardener.cloud/helm"
	Alias = "helm"
)

// Config is Landscaper's helm ProviderConfiguration. Readiness checks,
// exports from resources and deletion groups have the types of the shared
// Kubernetes machinery (internal/deployer/kube), which runs them.
type Config struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`

	UpdateStrategy  string                           `json:"updateStrategy,omitempty"`
	ReadinessChecks kube.ReadinessCheckConfiguration `json:"readinessChecks,omitempty"`
	Chart           Chart                            `json:"chart"`
	Name            string                           `json:"name"`
	Namespace       string                           `json:"namespace"`
	CreateNamespace bool                             `json:"createNamespace,omitempty"`
	Values          json.RawMessage                  `json:"values,omitempty"`

	// ExportsFromManifests is Landscaper's deprecated list of exports; it
	// is appended to Exports.Exports as Landscaper does.
	ExportsFromManifests []Export `json:"exportsFromManifests,omitempty"`
	Exports              *Exports `json:"exports,omitempty"`

	// ContinuousReconcile is accepted so Landscaper's configs decode; runs
	// happen only when Terraform applies, so it has no effect.
	ContinuousReconcile json.RawMessage `json:"continuousReconcile,omitempty"`

	HelmDeployment       *bool                 `json:"helmDeployment,omitempty"`
	HelmDeploymentConfig *HelmDeploymentConfig `json:"helmDeploymentConfig,omitempty"`

	DeletionGroups             []kube.DeletionGroupDefinition `json:"deletionGroups,omitempty"`
	DeletionGroupsDuringUpdate []kube.DeletionGroupDefinition `json:"deletionGroupsDuringUpdate,omitempty"`
}

// Chart says where the chart comes from: exactly one source is used, in
// Landscaper's order of precedence (archive, ref, helmChartRepo,
// fromResource, resourceRef).
type Chart struct {
	Ref           string         `json:"ref,omitempty"`
	FromResource  *ChartResource `json:"fromResource,omitempty"`
	Archive       *Archive       `json:"archive,omitempty"`
	HelmChartRepo *HelmChartRepo `json:"helmChartRepo,omitempty"`
	ResourceRef   string         `json:"resourceRef,omitempty"`
}

// ChartResource is Landscaper's chart.fromResource: a resource, by name,
// of the component ref names, or of the item's own component without ref.
type ChartResource struct {
	Ref *ComponentRef `json:"ref,omitempty"`
	// Inline component descriptors are rejected: the chart's content must
	// come from a component the installation knows.
	Inline       json.RawMessage `json:"inline,omitempty"`
	ResourceName string          `json:"resourceName"`
}

// ComponentRef names a component. The repository context is accepted and
// not used: components come from the installation's component set.
type ComponentRef struct {
	RepositoryContext json.RawMessage `json:"repositoryContext,omitempty"`
	ComponentName     string          `json:"componentName"`
	Version           string          `json:"version"`
}

// Archive is a chart archive: inline (base64 of a .tgz) or fetched.
type Archive struct {
	Raw    string         `json:"raw,omitempty"`
	Remote *RemoteArchive `json:"remote,omitempty"`
}

// RemoteArchive locates a chart archive. Besides Landscaper's http(s)
// URLs it accepts file:// URLs and plain paths, to a .tgz or a chart
// directory, since a Terraform configuration often sits next to its charts.
type RemoteArchive struct {
	URL string `json:"url,omitempty"`
}

// HelmChartRepo names a chart in a classic chart repository (index.yaml).
type HelmChartRepo struct {
	URL     string `json:"helmChartRepoUrl,omitempty"`
	Name    string `json:"helmChartName,omitempty"`
	Version string `json:"helmChartVersion,omitempty"`
}

// HelmDeploymentConfig holds the options of helm's operations. Landscaper
// keeps them as free maps and validates the keys; so do we.
type HelmDeploymentConfig struct {
	Install   map[string]json.RawMessage `json:"install,omitempty"`
	Upgrade   map[string]json.RawMessage `json:"upgrade,omitempty"`
	Uninstall map[string]json.RawMessage `json:"uninstall,omitempty"`
}

// Exports is Landscaper's exports block.
type Exports struct {
	DefaultTimeout json.RawMessage `json:"defaultTimeout,omitempty"`
	Exports        []Export        `json:"exports,omitempty"`
}

// Export is one export. Without FromResource its JSONPath reads the values
// helm renders with (.Values.x); with it, a deployed object. Timeout is
// accepted from Landscaper's configs; the item's timeout bounds the wait.
type Export struct {
	kube.Export
	Timeout json.RawMessage `json:"timeout,omitempty"`
}

// opOptions are the options of one helm operation, decoded from a
// helmDeploymentConfig map.
type opOptions struct {
	Atomic               bool     `json:"atomic,omitempty"`
	Force                bool     `json:"force,omitempty"`
	SkipSchemaValidation bool     `json:"skipSchemaValidation,omitempty"`
	TakeOwnership        bool     `json:"takeOwnership,omitempty"`
	Wait                 bool     `json:"wait,omitempty"`
	Timeout              Duration `json:"timeout,omitempty"`
}

// defaultOpTimeout is Landscaper's timeout of helm operations that name none.
const defaultOpTimeout = 5 * time.Minute

var (
	installKeys   = []string{"atomic", "force", "skipSchemaValidation", "takeOwnership", "timeout", "wait"}
	uninstallKeys = []string{"timeout", "wait"}
)

// Duration is Landscaper's duration: a Go duration string such as "5m".
type Duration time.Duration

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`must be a duration string such as "5m"`)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration", s)
	}
	if v < 0 {
		return fmt.Errorf("%q must not be negative", s)
	}
	*d = Duration(v)
	return nil
}

// helmDeployment reports whether the chart is installed as a helm release
// (Landscaper's default) rather than only rendered and applied.
func (c *Config) helmDeployment() bool { return c.HelmDeployment == nil || *c.HelmDeployment }

// allExports is Landscaper's merge of exports and exportsFromManifests.
func (c *Config) allExports() []kube.Export {
	var out []kube.Export
	if c.Exports != nil {
		for _, e := range c.Exports.Exports {
			out = append(out, e.Export)
		}
	}
	for _, e := range c.ExportsFromManifests {
		out = append(out, e.Export)
	}
	return out
}

// resourceExports are the exports read from deployed objects.
func (c *Config) resourceExports() *kube.Exports {
	var out kube.Exports
	for _, e := range c.allExports() {
		if e.FromResource != nil {
			out.Exports = append(out.Exports, e)
		}
	}
	return &out
}

// updateStrategy is the strategy objects are updated with in manifest mode.
func (c *Config) updateStrategy() kube.UpdateStrategy {
	if c.UpdateStrategy == "" {
		return kube.StrategyUpdate
	}
	return kube.UpdateStrategy(c.UpdateStrategy)
}

// parseConfig decodes and validates a config, rejecting unknown fields.
func parseConfig(raw json.RawMessage) (*Config, error) {
	var c Config
	warning := deployer.DecodeStrict(raw, &c)
	if warning != nil && !deployer.IsWarning(warning) {
		return nil, warning
	}
	if err := c.validate(warning); err != nil {
		return nil, err
	}
	// Unknown fields only warn: returned with the config, for Validate.
	return &c, warning
}

// validate applies Landscaper's validation of a ProviderConfiguration, plus
// what can be checked before anything runs (values are an object, option
// values have the right types). A missing required field names the
// unknown fields (warning) that look like a misspelling of it.
func (c *Config) validate(warning error) error {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	like := func(field string) string { return deployer.Lookalike(field, warning) }

	if c.APIVersion != "" && c.APIVersion != APIVersion {
		add("apiVersion: must be %q", APIVersion)
	}
	if c.Kind != "" && c.Kind != Kind {
		add("kind: must be %q", Kind)
	}
	if c.Name == "" {
		add("name: must not be empty%s", like("name"))
	}
	if c.Namespace == "" {
		add("namespace: must not be empty%s", like("namespace"))
	}
	switch c.UpdateStrategy {
	case "", "update", "patch":
	default:
		add(`updateStrategy: must be "update" or "patch"`)
	}
	errs = append(errs, c.Chart.validate(like)...)
	if len(c.Values) > 0 && string(c.Values) != "null" {
		var m map[string]any
		if err := json.Unmarshal(c.Values, &m); err != nil {
			add("values: must be an object")
		}
	}
	if h := c.HelmDeploymentConfig; h != nil {
		errs = append(errs, checkOptions("helmDeploymentConfig.install", h.Install, installKeys)...)
		errs = append(errs, checkOptions("helmDeploymentConfig.upgrade", h.Upgrade, installKeys)...)
		errs = append(errs, checkOptions("helmDeploymentConfig.uninstall", h.Uninstall, uninstallKeys)...)
	}
	all := c.allExports()
	keys := map[string]bool{}
	for i, e := range all {
		if e.Key != "" && keys[e.Key] {
			add("exports.exports[%d].key: duplicated key %s is not allowed", i, e.Key)
		}
		keys[e.Key] = true
	}
	errs = append(errs, kube.ValidateExports("exports", &kube.Exports{Exports: all})...)
	errs = append(errs, kube.ValidateReadinessChecks("readinessChecks", c.ReadinessChecks)...)
	errs = append(errs, kube.ValidateDeletionGroups("deletionGroups", c.DeletionGroups)...)
	errs = append(errs, kube.ValidateDeletionGroups("deletionGroupsDuringUpdate", c.DeletionGroupsDuringUpdate)...)
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

func (ch *Chart) validate(like func(field string) string) []string {
	if ch.Ref == "" && ch.Archive == nil && ch.FromResource == nil && ch.HelmChartRepo == nil && ch.ResourceRef == "" {
		return []string{"chart: must not be empty" + like("chart") + ": either ref, archive, fromResource, helmChartRepo or resourceRef must be set"}
	}
	var errs []string
	switch {
	case ch.Archive != nil:
		if ch.Archive.Raw == "" && (ch.Archive.Remote == nil || ch.Archive.Remote.URL == "") {
			errs = append(errs, "chart.archive: raw or remote.url must be set")
		}
	case ch.Ref != "":
		if err := ociregistry.CheckReference(ch.Ref); err != nil {
			errs = append(errs, "chart.ref: "+err.Error())
		}
	case ch.HelmChartRepo != nil:
		r := ch.HelmChartRepo
		if r.URL == "" {
			errs = append(errs, "chart.helmChartRepo.helmChartRepoUrl: must not be empty"+like("helmChartRepoUrl"))
		}
		if r.Name == "" {
			errs = append(errs, "chart.helmChartRepo.helmChartName: must not be empty"+like("helmChartName"))
		}
		if r.Version == "" {
			errs = append(errs, "chart.helmChartRepo.helmChartVersion: must not be empty"+like("helmChartVersion"))
		}
	case ch.FromResource != nil:
		if ch.FromResource.ResourceName == "" {
			errs = append(errs, "chart.fromResource.resourceName: must not be empty")
		}
		if len(ch.FromResource.Inline) > 0 {
			errs = append(errs, "chart.fromResource.inline: inline component descriptors are not supported; use ref or the installation's component")
		}
	}
	return errs
}

// checkOptions validates one helmDeploymentConfig map: only the keys
// Landscaper supports, each with a value of the right type.
func checkOptions(path string, m map[string]json.RawMessage, allowed []string) []string {
	var errs []string
	for k, v := range m {
		if !contains(allowed, k) {
			errs = append(errs, fmt.Sprintf("%s: unsupported value %q: supported values: %s", path, k, strings.Join(allowed, ", ")))
			continue
		}
		var o opOptions
		one, _ := json.Marshal(map[string]json.RawMessage{k: v})
		if err := json.Unmarshal(one, &o); err != nil {
			errs = append(errs, fmt.Sprintf("%s.%s: %s", path, k, strings.TrimPrefix(err.Error(), "json: ")))
		}
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// options decodes a validated helmDeploymentConfig map, with Landscaper's
// default timeout.
func options(m map[string]json.RawMessage) opOptions {
	o := opOptions{Timeout: Duration(defaultOpTimeout)}
	if len(m) > 0 {
		raw, _ := json.Marshal(m)
		_ = json.Unmarshal(raw, &o)
	}
	return o
}
