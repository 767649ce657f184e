//go:build unix

package provider

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

var configMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// kubeConfig renders two executions on the test cluster: infra creates a
// namespace and a ConfigMap and exports a value read from it by JSONPath;
// app's item takes that export into its own ConfigMap; an output shows it.
func kubeConfig(ns, value string) string {
	return fmt.Sprintf(`
locals {
  cluster = {
    type   = "landscaper.gardener.cloud/kubernetes-cluster"
    config = yamlencode({ kubeconfig = file(%[1]q) })
  }
}

resource "landscaper_execution" "infra" {
  name    = "infra"
  targets = { cluster = local.cluster }
  deploy_items = {
    base = {
      type   = "landscaper.gardener.cloud/kubernetes-manifest"
      target = "cluster"
      config = yamlencode({
        apiVersion = "manifest.deployer.landscaper.gardener.cloud/v1alpha2"
        kind       = "ProviderConfiguration"
        manifests = [
          { policy = "manage", manifest = { apiVersion = "v1", kind = "Namespace", metadata = { name = %[2]q } } },
          { policy = "manage", manifest = {
              apiVersion = "v1", kind = "ConfigMap"
              metadata   = { name = "settings", namespace = %[2]q }
              data       = { url = "http://db.%[2]s:5432/%[3]s" }
          } },
        ]
        exports = { exports = [
          { key = "db.url", jsonPath = ".data.url",
            fromResource = { apiVersion = "v1", kind = "ConfigMap", name = "settings", namespace = %[2]q } },
        ] }
      })
    }
  }
}

resource "landscaper_execution" "app" {
  name    = "app"
  targets = { cluster = local.cluster }
  deploy_items = {
    web = {
      type   = "kubernetes-manifest"
      target = "cluster"
      config = yamlencode({
        manifests = [{ manifest = {
          apiVersion = "v1", kind = "ConfigMap"
          metadata   = { name = "web", namespace = %[2]q }
          data       = { database = landscaper_execution.infra.exports.base.db.url }
        } }]
      })
    }
  }
}

output "db_url" {
  value = landscaper_execution.infra.exports.base.db.url
}
`, kubeEnv.KubeconfigPath(), ns, value)
}

func kubeCluster(t *testing.T) *target.Cluster {
	t.Helper()
	cl, err := target.NewCluster([]byte(fmt.Sprintf(`{"kubeconfig": %q}`, kubeEnv.Kubeconfig())))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func configMapData(t *testing.T, ns, name string) (map[string]any, bool) {
	t.Helper()
	u, err := kubeCluster(t).Get(context.Background(), configMapGVK, ns, name)
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	d, _ := u.Object["data"].(map[string]any)
	return d, true
}

func TestAccExecution_kubernetesManifest(t *testing.T) {
	if kubeEnv == nil {
		t.Skip("acceptance tests only (TF_ACC)")
	}
	const ns = "tf-acc-kube"
	url := func(v string) string { return "http://db." + ns + ":5432/" + v }
	deleteWeb := func() {
		ri, _, err := kubeCluster(t).Resource(configMapGVK, ns)
		if err != nil {
			t.Fatal(err)
		}
		if err := ri.Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			for _, name := range []string{"settings", "web"} {
				if _, ok := configMapData(t, ns, name); ok {
					return fmt.Errorf("ConfigMap %s survived destroy", name)
				}
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: kubeConfig(ns, "v1"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("landscaper_execution.infra", tfjsonpath.New("exports").AtMapKey("base").AtMapKey("db").AtMapKey("url"), knownvalue.StringExact(url("v1"))),
					statecheck.ExpectKnownValue("landscaper_execution.app", statusItem("web").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
					statecheck.ExpectKnownOutputValue("db_url", knownvalue.StringExact(url("v1"))),
				},
				Check: func(*terraform.State) error {
					d, ok := configMapData(t, ns, "web")
					if !ok || d["database"] != url("v1") {
						return fmt.Errorf("web ConfigMap %v (exists %v), want database=%s", d, ok, url("v1"))
					}
					return nil
				},
			},
			{
				// A changed export flows into the dependent execution.
				Config: kubeConfig(ns, "v2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("landscaper_execution.infra", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("landscaper_execution.app", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					if d, _ := configMapData(t, ns, "web"); d["database"] != url("v2") {
						return fmt.Errorf("web ConfigMap %v, want database=%s", d, url("v2"))
					}
					return nil
				},
			},
			{
				// Drift: an object deleted outside Terraform makes the plan
				// an update; the apply recreates it; the plan after that is
				// empty (checked by the test framework).
				PreConfig: deleteWeb,
				Config:    kubeConfig(ns, "v2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("landscaper_execution.app", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("landscaper_execution.infra", plancheck.ResourceActionNoop),
				}},
				Check: func(*terraform.State) error {
					if d, ok := configMapData(t, ns, "web"); !ok || d["database"] != url("v2") {
						return fmt.Errorf("web ConfigMap not repaired: %v (exists %v)", d, ok)
					}
					return nil
				},
			},
		},
	})
}
