//go:build unix

package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
)

func helmCluster(t *testing.T) (kubeconfigPath string, cs kubernetes.Interface) {
	t.Helper()
	if kubeEnv == nil {
		t.Skip("acceptance tests only (TF_ACC): TestMain starts the control plane for them")
	}
	helmEnv := kubeEnv
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(helmEnv.Kubeconfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig([]byte(helmEnv.Kubeconfig()))
	if err != nil {
		t.Fatal(err)
	}
	cs, err = kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return path, cs
}

// Landscaper's helm deploy items, unchanged, through Terraform: a chart
// directory next to the configuration and a chart in an OCI registry;
// an upgrade with changed values; exports from values; destroy uninstalls.
func TestAccExecution_helm(t *testing.T) {
	kubeconfig, cs := helmCluster(t)
	chartDir := helmtest.Dir(t, helmtest.Demo)
	reg := helmtest.NewRegistry(t)
	ref := reg.Push(t, helmtest.Archive(t, helmtest.Demo, "1.2.3"))

	config := func(message string) string {
		return fmt.Sprintf(`
resource "landscaper_execution" "app" {
  name = "helm-acc"
`+clusterTargetsHCL+`  deploy_items = {
    local = {
      type   = "landscaper.gardener.cloud/helm"
      target = "cluster"
      config = yamlencode({
        apiVersion      = "helm.deployer.landscaper.gardener.cloud/v1alpha1"
        kind            = "ProviderConfiguration"
        name            = "local"
        namespace       = "acc-helm"
        createNamespace = true
        chart           = { archive = { remote = { url = %[2]q } } }
        values          = { message = %[4]q }
        exports = { exports = [
          { key = "message", jsonPath = ".Values.message" },
          { key = "color", jsonPath = ".Values.nested.color" },
        ] }
      })
    }
    oci = {
      type       = "helm"
      target     = "cluster"
      depends_on = ["local"]
      config = yamlencode({
        name      = "oci"
        namespace = "acc-helm"
        chart     = { ref = %[3]q }
        values    = { message = "from-oci" }
        helmDeploymentConfig = { install = { wait = true, timeout = "2m" } }
      })
    }
  }
}
`, kubeconfig, chartDir, ref, message)
	}
	app := "landscaper_execution.app"
	configMap := func(name, want string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			cm, err := cs.CoreV1().ConfigMaps("acc-helm").Get(context.Background(), name+"-config", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if cm.Data["message"] != want {
				return fmt.Errorf("%s: message %q, want %q", name, cm.Data["message"], want)
			}
			return nil
		}
	}
	succeeded := func(item string) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(app,
			tfjsonpath.New("status").AtMapKey("deploy_items").AtMapKey(item).AtMapKey("phase"),
			knownvalue.StringExact("Succeeded"))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			for _, n := range []string{"local", "oci"} {
				_, err := cs.CoreV1().ConfigMaps("acc-helm").Get(context.Background(), n+"-config", metav1.GetOptions{})
				if !apierrors.IsNotFound(err) {
					return fmt.Errorf("%s still installed after destroy: %v", n, err)
				}
			}
			l, err := cs.CoreV1().Secrets("acc-helm").List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm"})
			if err != nil {
				return err
			}
			if len(l.Items) != 0 {
				return fmt.Errorf("%d helm release records left", len(l.Items))
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: config("one"),
				Check:  resource.ComposeTestCheckFunc(configMap("local", "one"), configMap("oci", "from-oci")),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(app, tfjsonpath.New("exports").AtMapKey("local"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"message": knownvalue.StringExact("one"),
						"color":   knownvalue.StringExact("blue"),
					})),
					succeeded("oci"),
				},
			},
			{
				Config: config("two"),
				Check: resource.ComposeTestCheckFunc(configMap("local", "two"), func(*terraform.State) error {
					l, err := cs.CoreV1().Secrets("acc-helm").List(context.Background(),
						metav1.ListOptions{LabelSelector: "owner=helm,name=local,status=deployed,version=2"})
					if err != nil {
						return err
					}
					if len(l.Items) != 1 {
						return fmt.Errorf("release local is not at revision 2")
					}
					return nil
				}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(app, tfjsonpath.New("exports").AtMapKey("local").AtMapKey("message"), knownvalue.StringExact("two")),
				},
			},
		},
	})
}

// helmDeployment: false through Terraform: the chart is rendered and its
// objects applied as the manifest deployer applies them, listed in the
// provider status; an upgrade that drops a template deletes its object;
// destroy deletes the objects but keeps the created namespace.
func TestAccExecution_helmManifestMode(t *testing.T) {
	kubeconfig, cs := helmCluster(t)
	chartDir := helmtest.Dir(t, helmtest.Workload)
	const ns = "acc-helm-manifest"

	config := func(extra bool) string {
		return fmt.Sprintf(`
resource "landscaper_execution" "app" {
  name = "helm-manifest-acc"
`+clusterTargetsHCL+`  deploy_items = {
    web = {
      type   = "landscaper.gardener.cloud/helm"
      target = "cluster"
      config = yamlencode({
        apiVersion      = "helm.deployer.landscaper.gardener.cloud/v1alpha1"
        kind            = "ProviderConfiguration"
        name            = "web"
        namespace       = %[3]q
        createNamespace = true
        helmDeployment  = false
        chart           = { archive = { remote = { url = %[2]q } } }
        values          = { message = "hi", extra = %[4]v }
        exports = { exports = [
          { key = "message", jsonPath = ".data.message",
            fromResource = { apiVersion = "v1", kind = "ConfigMap", name = "web-config", namespace = %[3]q } },
        ] }
      })
    }
  }
}
`, kubeconfig, chartDir, ns, extra)
	}
	app := "landscaper_execution.app"
	exists := func(name string, want bool) resource.TestCheckFunc {
		return func(*terraform.State) error {
			_, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
			switch {
			case err == nil && !want:
				return fmt.Errorf("configmap %s exists", name)
			case apierrors.IsNotFound(err) && want:
				return fmt.Errorf("configmap %s does not exist", name)
			case err != nil && !apierrors.IsNotFound(err):
				return err
			}
			return nil
		}
	}
	managed := func(want ...string) resource.TestCheckFunc {
		return resource.TestCheckResourceAttrWith(app, "status.deploy_items.web.provider_status", func(v string) error {
			var ps helm.ProviderStatus
			if err := json.Unmarshal([]byte(v), &ps); err != nil {
				return err
			}
			var got []string
			for _, mr := range ps.ManagedResources {
				got = append(got, mr.Resource.Kind+"/"+mr.Resource.Name)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) || ps.Release != nil {
				return fmt.Errorf("provider status %s, want managed %v and no release", v, want)
			}
			return nil
		})
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if err := exists("web-config", false)(nil); err != nil {
				return err
			}
			if _, err := cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); err != nil {
				return fmt.Errorf("the created namespace has policy keep: %v", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: config(true),
				Check: resource.ComposeTestCheckFunc(exists("web-config", true), exists("web-extra", true),
					managed("ConfigMap/web-config", "ConfigMap/web-extra", "Namespace/"+ns, "Secret/web-secret")),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(app, tfjsonpath.New("exports").AtMapKey("web").AtMapKey("message"), knownvalue.StringExact("hi")),
				},
			},
			{
				Config: config(false),
				Check: resource.ComposeTestCheckFunc(exists("web-config", true), exists("web-extra", false),
					managed("ConfigMap/web-config", "Namespace/"+ns, "Secret/web-secret")),
			},
		},
	})
}
