//go:build unix

package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ctf/ctftest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
)

// kubeTreeItem adds a kubernetes-manifest item to the helm blueprint, so
// the tree has manifest, helm-as-objects and helm-release items.
const kubeTreeItem = `        - name: manifest
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            updateStrategy: update
            manifests:
              - policy: manage
                manifest:
                  apiVersion: v1
                  kind: ConfigMap
                  metadata: {name: manifest-config, namespace: acc-helm-component}
                  data: {message: "{{ .imports.message }}-manifest"}
`

// A Kubernetes blueprint tree (a manifest item, a chart deployed as
// objects and as a release) installed from a registry, where the chart is
// an OCI artifact the component references by ociArtifact; from a CTF;
// and from a component archive.
func TestAccInstallation_kubernetesTreeFromRepositories(t *testing.T) {
	kubeconfig, cs := helmCluster(t)
	for _, kind := range []string{"registry", "ctf", "component-archive"} {
		t.Run(kind, func(t *testing.T) {
			ns := "acc-repo-" + kind
			dir := t.TempDir()
			if err := os.CopyFS(filepath.Join(dir, "chart"), os.DirFS(helmtest.Dir(t, helmtest.Workload))); err != nil {
				t.Fatal(err)
			}
			bp := strings.Replace(helmBlueprint, "      deployItems:\n", "      deployItems:\n"+kubeTreeItem, 1)
			acctest.WriteFile(t, filepath.Join(dir, "component-constructor.yaml"), helmComponent)
			if err := os.MkdirAll(filepath.Join(dir, "blueprint"), 0o755); err != nil {
				t.Fatal(err)
			}
			acctest.WriteFile(t, filepath.Join(dir, "blueprint", "blueprint.yaml"), strings.ReplaceAll(bp, "acc-helm-component", ns))
			versions := acctest.Publish(t, kind == "component-archive", filepath.Join(dir, "component-constructor.yaml"))
			v := versions[0]
			var component, provider string
			switch kind {
			case "registry":
				reg := ocitest.Start(t, ocitest.Options{CA: registryCA, Auth: ocitest.Basic, Username: "acme-ci", Password: registryPassword})
				// The chart as an OCI artifact beside the component, as
				// `ocm transfer` without --copy-resources leaves it.
				var blobs []ocitest.Blob
				for _, b := range v.Blobs {
					if b.MediaType == "application/vnd.gardener.landscaper.blueprint.v1+tar+gzip" {
						blobs = append(blobs, ocitest.Blob{MediaType: b.MediaType, Data: b.Data})
						continue
					}
					reg.PushArtifact(t, "charts/workload:1.0.0", ocitest.Blob{MediaType: "application/vnd.cncf.helm.config.v1+json", Data: []byte("{}")},
						ocitest.Blob{MediaType: "application/vnd.cncf.helm.chart.content.v1.tar+gzip", Data: b.Data})
				}
				v.Descriptor = setAccess(t, v.Descriptor, "chart", map[string]any{"type": "ociArtifact", "imageReference": reg.Host + "/charts/workload:1.0.0"})
				reg.PushComponent(t, "ocm", v.Name, v.Version, v.Descriptor, ocitest.OCM, blobs...)
				provider = fmt.Sprintf(`repository_context = { type = "OCIRegistry", baseUrl = "%s/ocm" }
  registry_credentials = { %q = { username = "acme-ci", password = %q } }`, reg.Host, reg.Host, registryPassword)
			case "ctf":
				component = fmt.Sprintf("repository = %q", ctftest.WriteArchive(t, filepath.Join(dir, "transport.tgz"), ctftest.Files(t, ctfVersions(versions)...)))
			case "component-archive":
				files := map[string][]byte{"component-descriptor.yaml": v.Descriptor}
				for _, b := range v.Blobs {
					files["blobs/"+strings.Replace(b.Digest, ":", ".", 1)] = b.Data
				}
				component = fmt.Sprintf("repository = %q", ctftest.WriteDir(t, filepath.Join(dir, "ca"), files))
			}
			config := fmt.Sprintf(`
provider "landscaper" {
  cache_dir = %q
  %s
}

resource "landscaper_installation" "app" {
  name      = "helm-app"
  blueprint = { ref = "blueprint" }
  component = {
    name    = "example.com/helm-app"
    version = "1.0.0"
    %s
  }
  targets = {
    cluster = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = file(%q) })
    }
  }
  imports = { message = "from-%s" }
}
`, t.TempDir(), provider, component, kubeconfig, kind)
			names := []string{"objects-config", "release-config", "manifest-config"}
			want := []string{"from-" + kind, "from-" + kind + "-release", "from-" + kind + "-manifest"}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				CheckDestroy: func(*terraform.State) error {
					for _, n := range names {
						if _, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
							return fmt.Errorf("%s still deployed after destroy: %v", n, err)
						}
					}
					return nil
				},
				Steps: []resource.TestStep{
					{
						Config: config,
						Check: func(*terraform.State) error {
							for i, n := range names {
								cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), n, metav1.GetOptions{})
								if err != nil {
									return err
								}
								if cm.Data["message"] != want[i] {
									return fmt.Errorf("%s: message %q, want %q", n, cm.Data["message"], want[i])
								}
							}
							return nil
						},
					},
					{Config: config, PlanOnly: true},
				},
			})
		})
	}
}

// setAccess replaces the access of a resource in a descriptor.
func setAccess(t *testing.T, desc []byte, resource string, access map[string]any) []byte {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(desc, &doc); err != nil {
		t.Fatal(err)
	}
	comp, _ := doc["component"].(map[string]any)
	list, _ := comp["resources"].([]any)
	found := false
	for _, r := range list {
		if m, _ := r.(map[string]any); m["name"] == resource {
			m["access"], found = access, true
		}
	}
	if !found {
		t.Fatalf("no resource %q", resource)
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
