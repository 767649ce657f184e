//go:build unix

package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// A blueprint tree written for a Landscaper cluster runs unchanged against
// a real API server: the root's kubernetes-manifest item creates a
// namespace, three sub-installations chained by data flow each create a
// ConfigMap named after what the previous one exported (read back from
// the cluster by an exports jsonPath), and the root exports the names.
func TestAccInstallation_kubernetesManifestTree(t *testing.T) {
	if kubeEnv == nil {
		t.Skip("acceptance tests only (TF_ACC)")
	}
	const ns = "tf-acc-inst"
	cfg := fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name      = "app"
  blueprint = { ref = "blueprint-root" }
  component = {
    name         = "example.com/configmaps"
    version      = "v0.1.0"
    constructors = [%q]
  }
  imports = {
    namespace   = %q
    "name-base" = "cm"
  }
  targets = {
    cluster = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = file(%q) })
    }
  }
}
`, testdataPath(t, "installation", "configmaps", "component-constructor.yaml"), ns, kubeEnv.KubeconfigPath())
	names := []string{"cm", "cm-x", "cm-x-x"}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(inst, tfjsonpath.New("exports").AtMapKey("names"), knownvalue.TupleExact([]knownvalue.Check{
					knownvalue.StringExact(names[0]), knownvalue.StringExact(names[1]), knownvalue.StringExact(names[2]),
				})),
				statecheck.ExpectKnownValue(inst, tfjsonpath.New("status").AtMapKey("deploy_items").AtMapKey("third/configmap"),
					knownvalue.StringExact("Succeeded")),
			},
			Check: func(*terraform.State) error {
				for _, n := range names {
					d, ok := configMapData(t, ns, n)
					if !ok || d["next"] != n+"-x" {
						return fmt.Errorf("ConfigMap %s/%s: %v (found %v)", ns, n, d, ok)
					}
				}
				return nil
			},
		}},
		CheckDestroy: func(*terraform.State) error {
			for _, n := range names {
				if _, ok := configMapData(t, ns, n); ok {
					return fmt.Errorf("ConfigMap %s/%s outlived the destroy", ns, n)
				}
			}
			return nil
		},
	})
}
