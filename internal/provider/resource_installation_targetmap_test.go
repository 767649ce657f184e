//go:build unix

package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// targetMapCase is one of Landscaper's target map integration tests
// (test/integration/targets/targetmaps.go): the root installation of its
// installation-NN.yaml and of the file it is updated to, as Terraform
// configuration. The blueprints are Landscaper's, unchanged, in
// testdata/installation/targetmap (its component-targetmap).
type targetMapCase struct {
	// blueprint and blueprintUpd are the resources the two installation
	// files name.
	blueprint, blueprintUpd string
	// configs is the name of the configs data import; extra are further
	// data imports, as HCL (the root's importDataMappings of constants in
	// Landscaper's files become data imports of the same name).
	configs, extra string
	// imports and importsUpd are the target attributes: Landscaper's
	// spec.imports.targets, each target named as the Target it imports.
	imports, importsUpd string
}

// The four Targets Landscaper's test creates, all on the one cluster.
const targetMapTargets = `
  red    = { name = "red-cluster", type = "landscaper.gardener.cloud/kubernetes-cluster", config = local.kubeconfig }
  blue   = { name = "blue-cluster", type = "landscaper.gardener.cloud/kubernetes-cluster", config = local.kubeconfig }
  yellow = { name = "yellow-cluster", type = "landscaper.gardener.cloud/kubernetes-cluster", config = local.kubeconfig }
  white  = { name = "white-cluster", type = "landscaper.gardener.cloud/kubernetes-cluster", config = local.kubeconfig }
`

// Landscaper's dataobject-configs.yaml and dataobject-configs-upd.yaml.
const (
	targetMapConfigs    = `{ red = { cpu = "180m", memory = "180Mi" }, blue = { cpu = "100m", memory = "100Mi" } }`
	targetMapConfigsUpd = `{ blue = { cpu = "100m", memory = "100Mi" }, yellow = { cpu = "140m", memory = "140Mi" } }`
)

func targetMapCases() map[string]targetMapCase {
	mapOf := func(name string, keys ...string) string {
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%s = local.%s, ", k, k)
		}
		return fmt.Sprintf("target_maps = { %s = { %s } }", name, b.String())
	}
	single := func(pairs ...string) string {
		var b strings.Builder
		for i := 0; i < len(pairs); i += 2 {
			fmt.Fprintf(&b, "%s = local.%s, ", pairs[i], pairs[i+1])
		}
		return fmt.Sprintf("targets = { %s }", b.String())
	}
	ref := func(bp string) string { return fmt.Sprintf("referencedBlueprint = %q", bp) }
	return map[string]targetMapCase{
		// should create a deployitem per target
		"01": {blueprint: "blueprint-multiple-items", configs: "configs",
			imports: mapOf("clusters", "red", "blue"), importsUpd: mapOf("clusters", "blue", "yellow")},
		// should pass a targetmap reference and create a deployitem per target
		"02": {blueprint: "blueprint-targetmap-ref", configs: "configs1", extra: ref("blueprint-multiple-items"),
			imports: mapOf("clusters1", "red", "blue"), importsUpd: mapOf("clusters1", "blue", "yellow")},
		// should twice pass a targetmap reference and create a deployitem per target
		"03": {blueprint: "blueprint-targetmap-ref-ref", configs: "configs2", extra: ref("blueprint-multiple-items"),
			imports: mapOf("clusters2", "red", "blue"), importsUpd: mapOf("clusters2", "blue", "yellow")},
		// should create a sub-installation per target
		"04": {blueprint: "blueprint-multiple-subinst", configs: "configs",
			imports: mapOf("clusters", "red", "blue", "yellow")},
		// should pass a targetmap reference and create a sub-installation per target
		"05": {blueprint: "blueprint-targetmap-ref", configs: "configs1", extra: ref("blueprint-multiple-subinst"),
			imports: mapOf("clusters1", "red", "blue", "yellow")},
		// should twice pass a targetmap reference and create a sub-installation per target
		"06": {blueprint: "blueprint-targetmap-ref-ref", configs: "configs2", extra: ref("blueprint-multiple-subinst"),
			imports: mapOf("clusters2", "red", "blue", "yellow")},
		// should compose a targetmap
		"07": {blueprint: "blueprint-composition", blueprintUpd: "blueprint-composition-upd", configs: "configs",
			imports: single("redCluster", "red", "blueCluster", "blue"), importsUpd: single("blueCluster", "blue", "yellowCluster", "yellow")},
		// should pass targets and compose a targetmap
		"08": {blueprint: "blueprint-composition-ref", blueprintUpd: "blueprint-composition-ref-upd", configs: "configs1",
			imports: single("redCluster1", "red", "blueCluster1", "blue"), importsUpd: single("blueCluster1", "blue", "yellowCluster1", "yellow")},
		// should compose a targetmap from exports
		"09": {blueprint: "blueprint-export-composition", configs: "configsEC", imports: single("clusterEC", "white")},
		// should pass a target and compose a targetmap from exports
		"10": {blueprint: "blueprint-export-composition-ref", configs: "configsECR", imports: single("clusterECR", "white")},
	}
}

func (c targetMapCase) config(t *testing.T, ns string, update bool) string {
	bp, configs, targets := c.blueprint, targetMapConfigs, c.imports
	if update {
		configs = targetMapConfigsUpd
		if c.blueprintUpd != "" {
			bp = c.blueprintUpd
		}
		if c.importsUpd != "" {
			targets = c.importsUpd
		}
	}
	return fmt.Sprintf(`
locals {
  kubeconfig = yamlencode({ kubeconfig = file(%q) })
%s
}

resource "landscaper_installation" "app" {
  name      = "targetmaps"
  blueprint = { ref = %q }
  component = {
    name         = "github.com/gardener/landscaper/integration-tests/targetmap"
    version      = "1.0.0"
    constructors = [%q]
  }
  imports = {
    namespace = %q
    %s = %s
    %s
  }
  %s
}
`, kubeEnv.KubeconfigPath(), targetMapTargets, bp,
		testdataPath(t, "installation", "targetmap", "commands", "component-constructor.yaml"),
		ns, c.configs, configs, c.extra, targets)
}

// Landscaper's ten target map cases through Terraform, asserting what its
// test asserts: after the first apply ConfigMaps cm-red (cpu 180m) and
// cm-blue (cpu 100m) exist and cm-yellow does not; after the update (red
// left the configs, yellow joined) cm-red is gone, cm-blue is the same
// object (updated, not recreated) and cm-yellow has cpu 140m; after the
// destroy both are gone.
func TestAccInstallation_landscaperTargetMaps(t *testing.T) {
	if kubeEnv == nil {
		t.Skip("acceptance tests only (TF_ACC)")
	}
	_, cs := helmCluster(t)
	for name, c := range targetMapCases() {
		t.Run(name, func(t *testing.T) {
			ns := "tf-acc-targetmap-" + name
			if _, err := cs.CoreV1().Namespaces().Create(context.Background(),
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
			cm := func(n string) *corev1.ConfigMap {
				got, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), n, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					return nil
				}
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			expect := func(n, cpu string) (*corev1.ConfigMap, error) {
				got := cm(n)
				switch {
				case got == nil && cpu != "":
					return nil, fmt.Errorf("ConfigMap %s/%s does not exist", ns, n)
				case got != nil && cpu == "":
					return nil, fmt.Errorf("ConfigMap %s/%s exists: %v", ns, n, got.Data)
				case got != nil && got.Data["cpu"] != cpu:
					return nil, fmt.Errorf("ConfigMap %s/%s: cpu %q, want %q", ns, n, got.Data["cpu"], cpu)
				}
				return got, nil
			}
			var blueUID string
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{
					{
						Config: c.config(t, ns, false),
						Check: func(*terraform.State) error {
							if _, err := expect("cm-red", "180m"); err != nil {
								return err
							}
							blue, err := expect("cm-blue", "100m")
							if err != nil {
								return err
							}
							blueUID = string(blue.UID)
							_, err = expect("cm-yellow", "")
							return err
						},
					},
					{
						Config: c.config(t, ns, true),
						Check: func(*terraform.State) error {
							if _, err := expect("cm-red", ""); err != nil {
								return err
							}
							blue, err := expect("cm-blue", "100m")
							if err != nil {
								return err
							}
							if string(blue.UID) != blueUID {
								return fmt.Errorf("cm-blue was recreated (uid %s, was %s), not updated", blue.UID, blueUID)
							}
							_, err = expect("cm-yellow", "140m")
							return err
						},
					},
				},
				CheckDestroy: func(*terraform.State) error {
					for _, n := range []string{"cm-blue", "cm-yellow"} {
						if _, err := expect(n, ""); err != nil {
							return fmt.Errorf("after the destroy: %w", err)
						}
					}
					return nil
				},
			})
		})
	}
}
