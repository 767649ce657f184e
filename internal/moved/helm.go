package moved

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"strings"

	"helm.sh/helm/v3/pkg/strvals"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
)

// helmDefaultTimeout is helm_release's default timeout in seconds, which
// is also Landscaper's default for helm operations (5m).
const helmDefaultTimeout = 300

// helmRelease converts helm_release of hashicorp/helm: 2.x (SDKv2, schema
// version 1: blocks are lists) and 3.x (framework, schema version 2:
// metadata and postrender are single objects). Both store the same
// attribute names, so one reader serves both by the values' shapes.
func helmRelease(s *state) *Item {
	name, ns := s.str("name"), s.str("namespace")
	if ns == "" {
		ns = "default"
	}
	s.refuseSet(map[string]string{
		"postrender": "a post-renderer rewrote the rendered chart with a local program; Landscaper's helm deployer " +
			"has none, so the release would be upgraded without it. Remove postrender (and apply) before the move",
		"set_wo_revision": "values were set through the write-only set_wo, which the state never holds; " +
			"put them in values, set or set_sensitive (and apply) before the move",
		"verify":            "the chart's provenance was verified; Landscaper's helm deployer does not verify provenance files",
		"reuse_values":      "upgrades merged the release's last values with the configured ones; the item passes exactly the configured values",
		"reset_values":      "upgrades reset the values to the chart's; the item passes the configured values",
		"recreate_pods":     "upgrades restarted the pods; the item's helm upgrade does not",
		"cleanup_on_fail":   "failed upgrades deleted the resources they created; set atomic instead, or remove it",
		"disable_webhooks":  "helm hooks were not run; the item's helm operations run them",
		"disable_crd_hooks": "the crd-install hooks were not run; the item's helm operations run them",
		"disable_openapi_validation": "rendered objects were not validated against the cluster's OpenAPI schema; " +
			"the item's helm operations validate them",
		"skip_crds":         "the chart's CRDs were not installed; the item's helm operations install them",
		"dependency_update": "helm dependency update ran before each install; the item loads the chart as it is, with the dependencies in its charts/ directory",
		"wait_for_jobs":     "upgrades waited for the release's Jobs to complete; the item's readiness checks do not look at Jobs",
	})
	cfg := map[string]any{"name": name, "namespace": ns, "chart": helmChart(s)}
	if s.boolean("create_namespace", false) {
		cfg["createNamespace"] = true
	}
	if v := helmValues(s); len(v) > 0 {
		cfg["values"] = v
	}
	if hc := helmOperations(s); len(hc) > 0 {
		cfg["helmDeploymentConfig"] = hc
	}
	if !s.boolean("wait", true) {
		// helm_release did not wait for the release's objects; the item
		// does, after the upgrade, unless its default check is off.
		cfg["readinessChecks"] = map[string]any{"disableDefault": true}
	}
	s.credentials()
	return &Item{
		Execution: name,
		Name:      ItemRelease,
		Type:      "helm",
		Config:    marshal(cfg),
		Adopt: &deployer.Adoption{Source: "helm_release",
			Release: &deployer.ObjectRef{Namespace: ns, Name: name}},
	}
}

// helmOperations carries the options of helm's install and upgrade that
// Landscaper's helmDeploymentConfig knows, where they are not its defaults.
func helmOperations(s *state) map[string]any {
	op := map[string]any{}
	if s.boolean("atomic", false) {
		op["atomic"] = true
	}
	if s.boolean("take_ownership", false) {
		op["takeOwnership"] = true
	}
	var timeout string
	if t := s.number("timeout", helmDefaultTimeout); t != helmDefaultTimeout {
		timeout = fmt.Sprintf("%ds", t)
		op["timeout"] = timeout
	}
	upgrade := maps.Clone(op)
	if s.boolean("force_update", false) {
		upgrade["force"] = true
	}
	out := map[string]any{}
	if len(op) > 0 {
		out["install"] = op
	}
	if len(upgrade) > 0 {
		out["upgrade"] = upgrade
	}
	if timeout != "" {
		out["uninstall"] = map[string]any{"timeout": timeout}
	}
	return out
}

// helmChart says where the chart comes from, as helm_release's chart,
// repository and version do: a chart repository, an OCI registry, a URL
// or a local path. The version is the one installed (metadata), which is
// also the configured one unless that was a range or left out.
func helmChart(s *state) map[string]any {
	chart, repo := strings.TrimSpace(s.str("chart")), strings.TrimSpace(s.str("repository"))
	version := helmInstalledVersion(s)
	switch {
	case strings.HasPrefix(repo, "oci://"):
		return map[string]any{"ref": strings.TrimPrefix(strings.TrimSuffix(repo, "/"), "oci://") + "/" + chart + ":" + version}
	case repo != "" && isURL(repo):
		return map[string]any{"helmChartRepo": map[string]any{
			"helmChartRepoUrl": repo, "helmChartName": chart, "helmChartVersion": version}}
	case repo != "":
		s.refuse("repository", "%q names a repository of the helm CLI's configuration (helm repo add), which the "+
			"landscaper provider does not read; set repository to the repository's URL (and apply) before the move", repo)
	case strings.HasPrefix(chart, "oci://"):
		return map[string]any{"ref": strings.TrimPrefix(chart, "oci://") + ":" + version}
	case isURL(chart):
		return map[string]any{"archive": map[string]any{"remote": map[string]any{"url": chart}}}
	default:
		if _, err := os.Stat(chart); err == nil {
			// As helm does, relative to where Terraform runs.
			return map[string]any{"archive": map[string]any{"remote": map[string]any{"url": chart}}}
		}
		if strings.Contains(chart, "/") && !strings.HasPrefix(chart, ".") && !strings.HasPrefix(chart, "/") {
			s.refuse("chart", "%q names a chart of a repository of the helm CLI's configuration (helm repo add), which the "+
				"landscaper provider does not read; set repository to the repository's URL and chart to the chart's name (and apply) before the move", chart)
		} else {
			s.refuse("chart", "the chart path %q does not exist here; run Terraform where the chart is", chart)
		}
	}
	return nil
}

func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// helmInstalledVersion is the chart version metadata records, else the
// configured version.
func helmInstalledVersion(s *state) string {
	for _, m := range s.objects("metadata") {
		var v string
		if json.Unmarshal(m["version"], &v) == nil && v != "" {
			return v
		}
	}
	return strings.TrimSpace(s.str("version"))
}

// credentials warns about repository credentials: they are not part of
// the item, but of the landscaper provider's registry_credentials.
func (s *state) credentials() {
	host := s.str("repository")
	if u, err := url.Parse(host); err == nil && u.Host != "" {
		host = u.Host
	}
	for _, a := range []string{"repository_username", "repository_password"} {
		if s.str(a) != "" {
			s.warn(a, "not carried over: give the landscaper provider registry_credentials for %q instead", host)
		}
	}
	for _, a := range []string{"repository_key_file", "repository_cert_file", "repository_ca_file"} {
		if s.str(a) != "" {
			s.warn(a, "not carried over: the landscaper provider reaches %q with its registry_credentials and the system's trusted certificates", host)
		}
	}
}

// helmValues merges values, set, set_list and set_sensitive as
// helm_release does, in that order.
func helmValues(s *state) map[string]any {
	base := map[string]any{}
	for i, v := range s.strings("values") {
		if v == "" {
			continue
		}
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(v), &m); err != nil {
			s.refuse(fmt.Sprintf("values[%d]", i), "not a YAML map: %v", err)
			continue
		}
		base = kube.MergeMaps(base, m)
	}
	for _, set := range s.objects("set") {
		setValue(s, "set", base, set)
	}
	for _, set := range s.objects("set_list") {
		var name string
		var list []string
		_ = json.Unmarshal(set["name"], &name)
		_ = json.Unmarshal(set["value"], &list)
		var parts []string
		for _, v := range list {
			if v != "" {
				parts = append(parts, v)
			}
		}
		if err := strvals.ParseInto(fmt.Sprintf("%s={%s}", name, strings.Join(parts, ",")), base); err != nil {
			s.refuse("set_list", "%q: %v", name, err)
		}
	}
	sensitive := s.objects("set_sensitive")
	for _, set := range sensitive {
		setValue(s, "set_sensitive", base, set)
	}
	if len(sensitive) > 0 {
		s.warn("set_sensitive", "its values are carried into the item's config, which is not a sensitive attribute: "+
			"build the config from sensitive values (a sensitive variable) so plans do not show them")
	}
	return base
}

// setValue applies one set entry as helm_release does: auto (helm's
// --set), string (--set-string) or literal (3.x: a YAML value).
func setValue(s *state, attr string, base map[string]any, set map[string]json.RawMessage) {
	var name, value, typ string
	_ = json.Unmarshal(set["name"], &name)
	_ = json.Unmarshal(set["value"], &value)
	_ = json.Unmarshal(set["type"], &typ)
	var err error
	switch typ {
	case "", "auto":
		err = strvals.ParseInto(name+"="+value, base)
	case "string":
		err = strvals.ParseIntoString(name+"="+value, base)
	case "literal":
		var lit map[string]any
		if err = yaml.Unmarshal([]byte(name+": "+value), &lit); err == nil {
			base[name] = lit[name]
		}
	default:
		err = fmt.Errorf("unknown type %q", typ)
	}
	if err != nil {
		s.refuse(attr, "%q: %v", name, err)
	}
}
