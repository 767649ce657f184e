//go:build unix

package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
)

// A blueprint's helm deploy items take their chart from a resource of the
// installation's component, as Landscaper blueprints do: by the key
// getResourceKey makes (chart.resourceRef) and by name (chart.fromResource).
func TestAccInstallation_helmChartFromTheComponent(t *testing.T) {
	kubeconfig, cs := helmCluster(t)
	dir := t.TempDir()
	chartDir := helmtest.Dir(t, helmtest.Demo)
	bp := filepath.Join(dir, "blueprint")
	if err := os.MkdirAll(bp, 0o755); err != nil {
		t.Fatal(err)
	}
	blueprint := `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: cluster, targetType: landscaper.gardener.cloud/kubernetes-cluster}
deployExecutions:
  - name: charts
    type: GoTemplate
    template: |
      deployItems:
        - name: by-key
          type: landscaper.gardener.cloud/helm
          target: {import: cluster}
          config:
            apiVersion: helm.deployer.landscaper.gardener.cloud/v1alpha1
            kind: ProviderConfiguration
            name: by-key
            namespace: acc-helm-component
            createNamespace: true
            chart:
              resourceRef: {{ getResourceKey "cd://resources/demo-chart" }}
            values: {message: key}
        - name: by-name
          type: landscaper.gardener.cloud/helm
          target: {import: cluster}
          dependsOn: [by-key]
          config:
            apiVersion: helm.deployer.landscaper.gardener.cloud/v1alpha1
            kind: ProviderConfiguration
            name: by-name
            namespace: acc-helm-component
            helmDeployment: false
            chart:
              fromResource:
                resourceName: demo-chart
            values: {message: name}
`
	if err := os.WriteFile(filepath.Join(bp, "blueprint.yaml"), []byte(blueprint), 0o644); err != nil {
		t.Fatal(err)
	}
	constructor := fmt.Sprintf(`components:
  - name: example.com/charts
    version: v1.0.0
    provider: {name: tests}
    resources:
      - name: blueprint
        type: landscaper.gardener.cloud/blueprint
        input: {type: dir, path: ./blueprint}
      - name: demo-chart
        type: helmChart
        input:
          type: dir
          path: %s
          compress: true
          preserveDir: true
          mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip
`, chartDir)
	cc := filepath.Join(dir, "component-constructor.yaml")
	if err := os.WriteFile(cc, []byte(constructor), 0o644); err != nil {
		t.Fatal(err)
	}
	message := func(name, want string) error {
		cm, err := cs.CoreV1().ConfigMaps("acc-helm-component").Get(context.Background(), name+"-config", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Data["message"] != want {
			return fmt.Errorf("%s: message %q, want %q", name, cm.Data["message"], want)
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name      = "charts"
  blueprint = { ref = "blueprint" }
  component = { name = "example.com/charts", version = "v1.0.0", constructors = [%q] }
  targets = { cluster = {
    type   = "landscaper.gardener.cloud/kubernetes-cluster"
    config = yamlencode({ kubeconfig = file(%q) })
  } }
}`, cc, kubeconfig),
			Check: func(*terraform.State) error {
				if err := message("by-key", "key"); err != nil {
					return err
				}
				return message("by-name", "name")
			},
		}},
	})
}
