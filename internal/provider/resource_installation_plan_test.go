package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// reviewBlueprint renders an item from a plain import, a sensitive import
// and a token parsed out of its target's kubeconfig, and one item that
// depends on none of them.
const reviewBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: environment, type: data, schema: {type: string}}
  - {name: password, type: data, schema: {type: string}}
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      {{- $kc := fromYaml .imports.cluster.spec.config.kubeconfig }}
      deployItems:
        - name: app
          type: landscaper.gardener.cloud/mock
          target: {import: cluster}
          config:
            export:
              environment: {{ .imports.environment }}
              dsn: "postgres://app:{{ .imports.password }}@db.{{ .imports.environment }}.internal"
              clusterToken: {{ (index $kc.users 0).user.token }}
        - name: static
          type: landscaper.gardener.cloud/mock
          config:
            export: {fixed: true}
`

func reviewConfig(environment string) string {
	return fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name      = "app"
  blueprint = { filesystem = { "blueprint.yaml" = %q } }
  imports           = { environment = %q }
  sensitive_imports = { password = "hunter2-s3cret" }
  targets = {
    cluster = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: kube-t0ken-777}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n" })
    }
  }
}`, reviewBlueprint, environment)
}

// noSecretsInPlan fails when a secret appears in a planned value of
// deploy_items, the attribute the plan shows in clear text.
type noSecretsInPlan struct{ secrets []string }

func (c noSecretsInPlan) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		after, _ := rc.Change.After.(map[string]any)
		text := fmt.Sprint(after[attrDeployItems])
		for _, s := range c.secrets {
			if strings.Contains(text, s) {
				resp.Error = fmt.Errorf("%s: deploy_items shows the secret %q: %s", rc.Address, s, text)
				return
			}
		}
	}
}

// A change of an import plans as the rendered diff of the items it
// changes: their configs known at plan time, the status a successful job
// leaves (the items that run announce the new job, nothing else moves),
// secrets masked; after the apply the plan is empty.
func TestAccInstallation_reviewablePlan(t *testing.T) {
	t.Parallel()
	res := "landscaper_installation.app"
	item := func(key, attr string) tfjsonpath.Path {
		return tfjsonpath.New(attrDeployItems).AtMapKey(key).AtMapKey(attr)
	}
	status := func(key string) tfjsonpath.Path {
		return tfjsonpath.New("status").AtMapKey(attrDeployItems).AtMapKey(key)
	}
	masked := noSecretsInPlan{secrets: []string{"hunter2-s3cret", "kube-t0ken-777"}}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: reviewConfig("staging"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(res, plancheck.ResourceActionCreate),
					// Rendered before anything ran, the target named by its import.
					plancheck.ExpectKnownValue(res, item("app", "target"), knownvalue.StringExact("cluster")),
					plancheck.ExpectKnownValue(res, item("app", "config"), knownvalue.StringRegexp(regexp.MustCompile(
						`"dsn":"postgres://app:\*\*\*@db.staging.internal"`))),
					plancheck.ExpectKnownValue(res, item("app", "config"), knownvalue.StringRegexp(regexp.MustCompile(`"clusterToken":"\*\*\*"`))),
					plancheck.ExpectKnownValue(res, item("static", "target"), knownvalue.Null()),
					masked,
				}},
			},
			{
				Config: reviewConfig("production"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(res, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(res, item("app", "config"), knownvalue.StringRegexp(regexp.MustCompile(
							`"environment":"production"`))),
						plancheck.ExpectKnownValue(res, item("static", "config"), knownvalue.StringExact(`{"export":{"fixed":true}}`)),
						// Less churn: the status is known, and only the job moves.
						plancheck.ExpectKnownValue(res, status("app"), knownvalue.StringExact("Succeeded")),
						plancheck.ExpectKnownValue(res, tfjsonpath.New("status").AtMapKey(attrDeployItemErrors), knownvalue.MapExact(map[string]knownvalue.Check{})),
						plancheck.ExpectKnownValue(res, tfjsonpath.New("status").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
						plancheck.ExpectKnownValue(res, tfjsonpath.New("target_exports"), knownvalue.MapExact(map[string]knownvalue.Check{})),
						plancheck.ExpectUnknownValue(res, tfjsonpath.New("exports")),
						masked,
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}

// An import is given as plain or as sensitive, not both.
func TestAccInstallation_sensitiveImportGivenTwice(t *testing.T) {
	t.Parallel()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: strings.Replace(reviewConfig("staging"), `imports           = { environment = "staging" }`,
				`imports           = { environment = "staging", password = "x" }`, 1),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Invalid imports.*import "password" is given in both imports and\s+sensitive_imports`),
		}},
	})
}

// exportedTargetBlueprint: sub-installation "exporter" exports a cluster
// target built from a token, its sibling "user" imports it and renders the
// token into an item: the token is a target's config there, and masked.
const exportedTargetBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: token, type: data, schema: {type: string}}
  - {name: label, type: data, schema: {type: string}}
subinstallations:
  - name: exporter
    blueprint:
      filesystem:
        blueprint.yaml: |
          apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: Blueprint
          imports:
            - {name: token, type: data, schema: {type: string}}
          exports:
            - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
          exportExecutions:
            - name: x
              type: GoTemplate
              template: |
                exports:
                  cluster:
                    type: landscaper.gardener.cloud/kubernetes-cluster
                    config:
                      kubeconfig: |
                        apiVersion: v1
                        kind: Config
                        users: [{name: u, user: {token: {{ .imports.token }}}}]
    imports:
      data:
        - {name: token, dataRef: token}
    exports:
      targets:
        - {name: cluster, target: shared-cluster}
  - name: user
    blueprint:
      filesystem:
        blueprint.yaml: |
          apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: Blueprint
          imports:
            - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
            - {name: label, type: data, schema: {type: string}}
          deployExecutions:
            - name: x
              type: GoTemplate
              template: |
                {{- $kc := fromYaml .imports.cluster.spec.config.kubeconfig }}
                deployItems:
                  - name: item
                    type: landscaper.gardener.cloud/mock
                    config:
                      export:
                        label: {{ .imports.label }}
                        token: {{ (index $kc.users 0).user.token }}
    imports:
      data:
        - {name: label, dataRef: label}
      targets:
        - {name: cluster, target: shared-cluster}
`

func exportedTargetConfig(label string) string {
	return fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name      = "app"
  blueprint = { filesystem = { "blueprint.yaml" = %q } }
  imports   = { token = "exported-t0ken-99", label = %q }
}`, exportedTargetBlueprint, label)
}

// A target one sub-installation exports to another is as secret as an
// imported one: masked in the state after apply and in the next plan.
func TestAccInstallation_exportedTargetMasked(t *testing.T) {
	t.Parallel()
	res := "landscaper_installation.app"
	config := tfjsonpath.New(attrDeployItems).AtMapKey("user/item").AtMapKey("config")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: exportedTargetConfig("one"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(res, config, knownvalue.StringExact(`{"export":{"label":"one","token":"***"}}`)),
				},
			},
			{
				Config: exportedTargetConfig("two"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(res, config, knownvalue.StringExact(`{"export":{"label":"two","token":"***"}}`)),
					noSecretsInPlan{secrets: []string{"exported-t0ken-99"}},
				}},
			},
		},
	})
}

// Targets given through a variable: Terraform cannot point at the element
// at fault, so the message names it.
func TestAccInstallation_diagnosticsNameElementsFromVariables(t *testing.T) {
	t.Parallel()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
variable "fleet" {
  default = { eu = { type = "nope", config = "{}" }, "us[1]" = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = "{}" } }
}
resource "landscaper_installation" "app" {
  name        = "app"
  blueprint   = { filesystem = { "blueprint.yaml" = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n" } }
  target_maps = { fleet = var.fleet }
}`,
			PlanOnly: true,
			ExpectError: regexp.MustCompile(`(?s)target_maps\["fleet"\]\["eu"\]\.type: "nope" is not a known target type.*` +
				`target map "fleet", key "us\[1\]"`),
		}},
	})
}

// A settled installation whose only change is a configured attribute
// (timeouts here) plans that change and keeps what was computed; the
// apply runs nothing.
func TestAccInstallation_settledConfigOnlyChange(t *testing.T) {
	w := newWorld(t)
	base := w.fleetInstallation("v1", "", "")
	withTimeouts := strings.Replace(base, `  name      = "fleet"`, `  name      = "fleet"
  timeouts  = { update = "5m" }`, 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: base, Check: func(*terraform.State) error { w.Runs(); return nil }},
			{
				Config: withTimeouts,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(inst, tfjsonpath.New("status").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
				}},
				Check: func(*terraform.State) error {
					if runs := w.Runs(); len(runs) != 0 {
						return fmt.Errorf("a timeouts change ran %v", runs)
					}
					return nil
				},
			},
		},
	})
}
