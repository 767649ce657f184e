package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// checkTargetBlueprint imports a target and runs an exec item on it that
// succeeds only if the target's config, as the deployer gets it, matches
// the pattern (which the state may hold: it is not the token).
const checkTargetBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: check
          type: exec
          target: {import: cluster}
          config:
            command: [sh, -c, 'grep -q "$WANT" "$TARGET_PATH"']
            env: {WANT: %q}
`

// relayBlueprint passes the target it imports on twice, the way blueprints
// copy a Target's spec: a sub-installation exports it to a sibling, which
// uses it, and the root exports what the sub-installation exported.
func relayBlueprint(token string) string {
	check := fmt.Sprintf(checkTargetBlueprint, tokenPattern(token))
	return fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
exports:
  - {name: out, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
subinstallations:
  - name: passer
    blueprint:
      filesystem:
        blueprint.yaml: |
          apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: Blueprint
          imports:
            - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
          exports:
            - {name: passed, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
          exportExecutions:
            - name: x
              type: GoTemplate
              template: |
                exports:
                  passed:
                    type: {{ .imports.cluster.spec.type }}
                    config: {{ toJson .imports.cluster.spec.config }}
    imports: {targets: [{name: cluster, target: cluster}]}
    exports: {targets: [{name: passed, target: relayed}]}
  - name: user
    blueprint: {filesystem: {blueprint.yaml: %q}}
    imports: {targets: [{name: cluster, target: relayed}]}
exportExecutions:
  - name: x
    type: Spiff
    template:
      exports:
        out:
          type: (( values.targets.relayed.spec.type ))
          config: (( values.targets.relayed.spec.config ))
          labels: {via: relay}
`, check)
}

func exportedRefHCL(token string) string {
	return fmt.Sprintf(`
provider "landscaper" {
  targets = {
    prod = {
      type = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = yamlencode({
        apiVersion        = "v1"
        kind              = "Config"
        clusters          = [{ name = "c", cluster = { server = "https://127.0.0.1:1" } }]
        users             = [{ name = "u", user = { token = %[1]q } }]
        contexts          = [{ name = "c", context = { cluster = "c", user = "u" } }]
        "current-context" = "c"
      }) })
    }
  }
}

resource "landscaper_installation" "relay" {
  name      = "relay"
  blueprint = { filesystem = { "blueprint.yaml" = %[2]q } }
  targets   = { cluster = { name = "prod" } }
}

resource "landscaper_installation" "down" {
  name      = "down"
  blueprint = { filesystem = { "blueprint.yaml" = %[3]q } }
  targets   = { cluster = { name = landscaper_installation.relay.target_exports["out"].name } }
}
`, token, relayBlueprint(token), fmt.Sprintf(checkTargetBlueprint, tokenPattern(token)))
}

// tokenPattern matches token without containing it.
func tokenPattern(token string) string {
	return token[:len(token)-1] + "[" + token[len(token)-1:] + "]"
}

// A blueprint that passes on a provider target it imports exports the
// reference, not a null config: a sibling sub-installation and a
// downstream installation both reach the provider's config (their exec
// items find the token in it), and the state holds no config.
func TestAccInstallation_exportedProviderTargetKeepsItsReference(t *testing.T) {
	const token = "t0k3n-relay-5c1e"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: exportedRefHCL(token),
			Check: resource.ComposeTestCheckFunc(
				notInAttributes(token),
				resource.TestCheckResourceAttr("landscaper_installation.relay", "status.deploy_items.user/check", "Succeeded"),
				resource.TestCheckResourceAttr("landscaper_installation.relay", "target_exports.out.name", "prod"),
				resource.TestCheckResourceAttr("landscaper_installation.relay", "target_exports.out.labels.via", "relay"),
				resource.TestCheckNoResourceAttr("landscaper_installation.relay", "target_exports.out.config"),
				resource.TestCheckResourceAttr("landscaper_installation.relay", "deploy_items.user/check.target",
					`cluster -> provider target "prod" (https://127.0.0.1:1)`),
				resource.TestCheckResourceAttr("landscaper_installation.down", "status.deploy_items.check", "Succeeded"),
			),
		}},
	})
}

// A blueprint cannot reach a provider target it was not given by writing
// the marker itself.
func TestAccInstallation_exportNamingAnotherProviderTarget(t *testing.T) {
	bp := `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
exports:
  - {name: out, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
exportExecutions:
  - name: x
    type: GoTemplate
    template: |
      exports:
        out:
          type: landscaper.gardener.cloud/kubernetes-cluster
          config: {providerTargetRef: prod}
`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "landscaper" {
  targets = { prod = {
    type   = "landscaper.gardener.cloud/kubernetes-cluster"
    config = yamlencode({ kubeconfig = yamlencode({
      apiVersion = "v1", kind = "Config", "current-context" = "c"
      clusters   = [{ name = "c", cluster = { server = "https://127.0.0.1:1" } }]
      users      = [{ name = "u", user = { token = "x" } }]
      contexts   = [{ name = "c", context = { cluster = "c", user = "u" } }]
    }) })
  } }
}

resource "landscaper_installation" "forger" {
  name      = "forger"
  blueprint = { filesystem = { "blueprint.yaml" = %q } }
}
`, bp),
			ExpectError: regexp.MustCompile(`provider target "prod" is not imported here`),
		}},
	})
}
