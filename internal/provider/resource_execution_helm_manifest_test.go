//go:build unix

package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
)

// helmDeployment: false, as Landscaper's helm deployer does it: the chart
// from a chart repository is rendered and its objects applied with the
// manifest deployer's machinery (no helm release), a custom readiness
// check and an export read from an applied object; an upgrade changes the
// objects in place; destroy deletes them in deletion groups.
func TestAccExecution_helmWithoutRelease(t *testing.T) {
	kubeconfig, cs := helmCluster(t)
	repo := helmtest.NewRepo(t)
	repo.Add(t, helmtest.Archive(t, helmtest.Demo, "0.4.0"))
	const ns = "acc-helm-manifest"
	config := func(message string) string {
		return fmt.Sprintf(`
resource "landscaper_execution" "app" {
  name = "helm-manifest"
  targets = {
    cluster = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = file(%[1]q) })
    }
  }
  deploy_items = {
    rendered = {
      type   = "landscaper.gardener.cloud/helm"
      target = "cluster"
      config = yamlencode({
        apiVersion      = "helm.deployer.landscaper.gardener.cloud/v1alpha1"
        kind            = "ProviderConfiguration"
        name            = "rendered"
        namespace       = %[3]q
        createNamespace = true
        helmDeployment  = false
        chart = { helmChartRepo = {
          helmChartRepoUrl = %[2]q
          helmChartName    = "demo"
          helmChartVersion = "0.4.0"
        } }
        values = { message = %[4]q }
        readinessChecks = { custom = [{
          name             = "message-set"
          resourceSelector = [{ apiVersion = "v1", kind = "ConfigMap", name = "rendered-config", namespace = %[3]q }]
          requirements     = [{ jsonPath = ".data.message", operator = "==", values = [{ value = %[4]q }] }]
        }] }
        exports = { exports = [
          { key = "fromObject", jsonPath = ".data.message",
            fromResource = { apiVersion = "v1", kind = "ConfigMap", name = "rendered-config", namespace = %[3]q } },
          { key = "fromValues", jsonPath = ".Values.message" },
        ] }
        deletionGroups = [
          { predefinedResourceGroup = { type = "namespaced-resources" } },
          { predefinedResourceGroup = { type = "cluster-scoped-resources" } },
        ]
      })
    }
  }
}
`, kubeconfig, repo.URL, ns, message)
	}
	app := "landscaper_execution.app"
	exports := tfjsonpath.New("exports").AtMapKey("rendered")
	message := func(want string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "rendered-config", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if cm.Data["message"] != want {
				return fmt.Errorf("message %q, want %q", cm.Data["message"], want)
			}
			if cm.Labels["helm.deployer.landscaper.gardener.cloud/deployitem"] == "" {
				return fmt.Errorf("the object lacks the deploy item label: %v", cm.Labels)
			}
			l, err := cs.CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm"})
			if err != nil {
				return err
			}
			if len(l.Items) != 0 {
				return fmt.Errorf("helmDeployment: false made %d helm release records", len(l.Items))
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			_, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "rendered-config", metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("the rendered ConfigMap outlived the destroy: %v", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: config("first"),
				Check:  message("first"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(app, exports.AtMapKey("fromObject"), knownvalue.StringExact("first")),
					statecheck.ExpectKnownValue(app, exports.AtMapKey("fromValues"), knownvalue.StringExact("first")),
				},
			},
			{
				Config: config("second"),
				Check: resource.ComposeTestCheckFunc(message("second"), func(s *terraform.State) error {
					ps := s.RootModule().Resources[app].Primary.Attributes["status.deploy_items.rendered.provider_status"]
					if !strings.Contains(ps, "managedResources") || !strings.Contains(ps, "rendered-config") {
						return fmt.Errorf("provider_status does not list the managed objects: %s", ps)
					}
					return nil
				}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(app, exports.AtMapKey("fromObject"), knownvalue.StringExact("second")),
				},
			},
		},
	})
}
