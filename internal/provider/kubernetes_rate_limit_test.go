//go:build unix

package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// rateLimitConfig is an execution with one ConfigMap under a provider
// block with providerBody.
func rateLimitConfig(kubeconfig, providerBody string) string {
	return fmt.Sprintf(`
provider "landscaper" {
  %[2]s
}

resource "landscaper_execution" "app" {
  name = "rate-limit"
  targets = { cluster = {
    type   = "landscaper.gardener.cloud/kubernetes-cluster"
    config = yamlencode({ kubeconfig = file(%[1]q) })
  } }
  deploy_items = {
    cm = {
      type   = "kubernetes-manifest"
      target = "cluster"
      config = yamlencode({
        manifests = [{ policy = "manage", manifest = {
          apiVersion = "v1", kind = "ConfigMap"
          metadata   = { name = "rate-limit", namespace = "default" }
          data       = { a = "b" }
        } }]
      })
    }
  }
}
`, kubeconfig, providerBody)
}

// Without kubernetes_rate_limit the cluster clients have no client-side
// limit; with it they have the one asked for (burst defaulting to twice
// qps); a limit below 1 is refused at plan time.
func TestAccProvider_kubernetesRateLimit(t *testing.T) {
	kubeconfig, _ := helmCluster(t)
	t.Cleanup(func() { target.SetRateLimit(target.RateLimit{}) })
	data, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	targetConfig, _ := json.Marshal(map[string]string{"kubeconfig": string(data)})
	limit := func(qps float32, burst int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			// The clients the deployers get for this target now.
			cl, err := target.ClusterFor(targetConfig)
			if err != nil {
				return err
			}
			if got := cl.Config; got.QPS != qps || got.Burst != burst {
				return fmt.Errorf("client QPS/burst %v/%d, want %v/%d", got.QPS, got.Burst, qps, burst)
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: rateLimitConfig(kubeconfig, ""), Check: limit(-1, 0)},
			{Config: rateLimitConfig(kubeconfig, "kubernetes_rate_limit = { qps = 7 }"), Check: limit(7, 14)},
			{Config: rateLimitConfig(kubeconfig, "kubernetes_rate_limit = { qps = 7, burst = 3 }"), Check: limit(7, 3)},
		},
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: rateLimitConfig(kubeconfig, "kubernetes_rate_limit = { qps = 0 }"), PlanOnly: true,
			ExpectError: regexp.MustCompile(`kubernetes_rate_limit.qps value must be at least 1`),
		}},
	})
}
