//go:build unix

package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
)

// helmComponent is a component whose chart is a chart directory, a
// resource of type helmChart with input type dir, next to the blueprint
// that deploys it.
const helmComponent = `components:
  - name: example.com/helm-app
    version: 1.0.0
    provider:
      name: tests
    resources:
      - name: blueprint
        type: landscaper.gardener.cloud/blueprint
        input:
          type: dir
          path: ./blueprint
          compress: true
          mediaType: application/vnd.gardener.landscaper.blueprint.v1+tar+gzip
      - name: chart
        type: helmChart
        input:
          type: dir
          path: ./chart
          compress: true
`

// helmBlueprint installs the chart twice: as objects (helmDeployment:
// false) with Landscaper's resourceRef from getResourceKey, and as a helm
// release with chart.fromResource naming the resource.
const helmBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - name: cluster
    targetType: landscaper.gardener.cloud/kubernetes-cluster
  - name: message
    type: data
    schema: {type: string}
exports:
  - name: message
    type: data
    schema: {type: string}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: objects
          type: landscaper.gardener.cloud/helm
          target: {import: cluster}
          config:
            apiVersion: helm.deployer.landscaper.gardener.cloud/v1alpha1
            kind: ProviderConfiguration
            name: objects
            namespace: acc-helm-component
            createNamespace: true
            helmDeployment: false
            chart:
              resourceRef: {{ getResourceKey "cd://resources/chart" }}
            values:
              message: {{ .imports.message }}
            exports:
              exports:
                - key: message
                  jsonPath: .data.message
                  fromResource: {apiVersion: v1, kind: ConfigMap, name: objects-config, namespace: acc-helm-component}
        - name: release
          type: landscaper.gardener.cloud/helm
          target: {import: cluster}
          dependsOn: [objects]
          config:
            name: release
            namespace: acc-helm-component
            chart:
              fromResource:
                resourceName: chart
            values:
              message: {{ .imports.message }}-release
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        message: {{ .deployitems.objects.message }}
`

func TestAccInstallation_helmChartFromComponent(t *testing.T) {
	kubeconfig, cs := helmCluster(t)
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "chart"), os.DirFS(helmtest.Dir(t, helmtest.Workload))); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"component-constructor.yaml": helmComponent,
		"blueprint/blueprint.yaml":   helmBlueprint,
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const ns = "acc-helm-component"
	config := fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name      = "helm-app"
  blueprint = { ref = "blueprint" }
  component = {
    name         = "example.com/helm-app"
    version      = "1.0.0"
    constructors = [%q]
  }
  targets = {
    cluster = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = file(%q) })
    }
  }
  imports = { message = "from-component" }
}
`, filepath.Join(dir, "component-constructor.yaml"), kubeconfig)
	message := func(name, want string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name+"-config", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if cm.Data["message"] != want {
				return fmt.Errorf("%s: message %q, want %q", name, cm.Data["message"], want)
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			for _, n := range []string{"objects", "release"} {
				if _, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), n+"-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					return fmt.Errorf("%s still deployed after destroy: %v", n, err)
				}
			}
			return nil
		},
		Steps: []resource.TestStep{{
			Config: config,
			Check:  resource.ComposeTestCheckFunc(message("objects", "from-component"), message("release", "from-component-release")),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("landscaper_installation.app", tfjsonpath.New("exports").AtMapKey("message"),
					knownvalue.StringExact("from-component")),
			},
		}},
	})
}
