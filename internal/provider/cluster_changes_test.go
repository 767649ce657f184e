//go:build unix

package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
)

// clusterChangesBlueprint renders one kubernetes-manifest item: a
// namespace, a ConfigMap from the value import, a Secret, and a second
// ConfigMap while extra is true.
const clusterChangesBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: namespace, type: data, schema: {type: string}}
  - {name: value, type: data, schema: {type: string}}
  - {name: extra, type: data, schema: {type: boolean}}
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: objects
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            manifests:
              - {policy: manage, manifest: {apiVersion: v1, kind: Namespace, metadata: {name: {{ .imports.namespace }}}}}
              - policy: manage
                manifest:
                  apiVersion: v1
                  kind: ConfigMap
                  metadata: {name: app, namespace: {{ .imports.namespace }}}
                  data: {value: {{ .imports.value }}}
              - policy: manage
                manifest:
                  apiVersion: v1
                  kind: Secret
                  metadata: {name: creds, namespace: {{ .imports.namespace }}}
                  stringData: {password: {{ printf "%s-pw" .imports.value }}}
              {{- if .imports.extra }}
              - policy: manage
                manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: extra, namespace: {{ .imports.namespace }}}}
              {{- end }}
`

func clusterChangesConfig(kubeconfig, value string, extra bool) string {
	return fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name                 = "cluster-changes"
  plan_cluster_changes = true
  blueprint            = { filesystem = { "blueprint.yaml" = %q } }
  imports              = { namespace = "tf-acc-changes", value = %q, extra = %t }
  targets = {
    cluster = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = file(%q) })
    }
  }
}`, clusterChangesBlueprint, value, extra, kubeconfig)
}

func changesOf(objects map[string]string) knownvalue.Check {
	checks := map[string]knownvalue.Check{}
	for o, c := range objects {
		checks[o] = knownvalue.StringExact(c)
	}
	return knownvalue.MapExact(map[string]knownvalue.Check{"objects": knownvalue.MapExact(checks)})
}

// With plan_cluster_changes the plan shows what the apply will do to each
// object: creates first; then the fields a change of an import changes (a
// Secret's by path, never its value), the delete of an object the
// blueprint dropped, and what stays; the apply keeps what the plan showed,
// and the plan after it is empty.
func TestAccInstallation_planClusterChanges(t *testing.T) {
	kubeconfig, _ := helmCluster(t)
	res := "landscaper_installation.app"
	at := tfjsonpath.New(attrClusterChanges)
	ns := "tf-acc-changes"
	obj := func(kind, name string) string { return "v1 " + kind + " " + ns + "/" + name }
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: clusterChangesConfig(kubeconfig, "one", true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(res, at, changesOf(map[string]string{
						"v1 Namespace " + ns: "create", obj("ConfigMap", "app"): "create", obj("ConfigMap", "extra"): "create",
						obj("Secret", "creds"): "create",
					})),
				}},
			},
			{
				Config: clusterChangesConfig(kubeconfig, "two", false),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectKnownValue(res, at, changesOf(map[string]string{
							"v1 Namespace " + ns: "unchanged", obj("ConfigMap", "app"): "update: data.value",
							obj("ConfigMap", "extra"): "delete", obj("Secret", "creds"): "update: data.password",
						})),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}

// A cluster that cannot be reached turns the dry run into a warning: the
// plan goes on, without the item's changes.
func TestAccInstallation_planClusterChangesUnreachable(t *testing.T) {
	down := writeKubeconfig(t, "https://127.0.0.1:1")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:             clusterChangesConfig(down, "one", false),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue("landscaper_installation.app", tfjsonpath.New(attrClusterChanges), knownvalue.MapExact(map[string]knownvalue.Check{})),
			}},
		}},
	})
}

// landscaper_execution takes plan_cluster_changes from the provider: a
// helm release's dry run shows its objects, and a changed value the
// fields it changes.
func TestAccExecution_planClusterChangesOfARelease(t *testing.T) {
	kubeconfig, _ := helmCluster(t)
	chartDir := helmtest.Dir(t, helmtest.Workload)
	config := func(message string) string {
		return fmt.Sprintf(`
provider "landscaper" {
  plan_cluster_changes = true
}

resource "landscaper_execution" "app" {
  name = "changes"
  targets = {
    cluster = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = file(%q) })
    }
  }
  deploy_items = {
    release = {
      type   = "helm"
      target = "cluster"
      config = yamlencode({
        name = "changes", namespace = "tf-acc-changes-helm", createNamespace = true
        chart  = { archive = { remote = { url = %q } } }
        values = { message = %q }
      })
    }
  }
}`, kubeconfig, chartDir, message)
	}
	ns := "tf-acc-changes-helm"
	release := func(objects map[string]string) knownvalue.Check {
		checks := map[string]knownvalue.Check{}
		for o, c := range objects {
			checks["v1 "+o] = knownvalue.StringExact(c)
		}
		return knownvalue.MapExact(map[string]knownvalue.Check{"release": knownvalue.MapExact(checks)})
	}
	res := "landscaper_execution.app"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config("one"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(res, tfjsonpath.New(attrClusterChanges), release(map[string]string{
						"ConfigMap " + ns + "/changes-config": "create", "Secret " + ns + "/changes-secret": "create"})),
				}},
			},
			{
				Config: config("two"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectKnownValue(res, tfjsonpath.New(attrClusterChanges), release(map[string]string{
							"ConfigMap " + ns + "/changes-config": "update: data.message", "Secret " + ns + "/changes-secret": "update: data.token"})),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}

// writeKubeconfig writes a kubeconfig of a cluster at server.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kc := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: '%s'}}]\n"+
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", server)
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
