//go:build unix

package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

var widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

func clientset(t *testing.T) kubernetes.Interface {
	t.Helper()
	rc, err := clientcmd.RESTConfigFromKubeConfig([]byte(kubeEnv.Kubeconfig()))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// manifestItem renders a kubernetes-manifest deploy item on the test
// cluster; extra is HCL merged into its ProviderConfiguration.
func manifestItem(manifests string, extra string, deps ...string) string {
	d, _ := json.Marshal(deps)
	if len(deps) == 0 {
		d = []byte("[]")
	}
	return fmt.Sprintf(`{
      type       = "landscaper.gardener.cloud/kubernetes-manifest"
      target     = "cluster"
      depends_on = %s
      timeout    = "2m"
      config = yamlencode(merge({
        apiVersion = "manifest.deployer.landscaper.gardener.cloud/v1alpha2"
        kind       = "ProviderConfiguration"
        manifests  = %s
      }, %s))
    }`, d, manifests, extra)
}

func clusterExecution(name string, items map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `
resource "landscaper_execution" %q {
  name = %q
  targets = { cluster = {
    type   = "landscaper.gardener.cloud/kubernetes-cluster"
    config = yamlencode({ kubeconfig = file(%q) })
  } }
  deploy_items = {
`, name, name, kubeEnv.KubeconfigPath())
	for n, it := range items {
		fmt.Fprintf(&b, "    %q = %s\n", n, it)
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// A CRD and a custom resource of it in one item (readiness waits for the
// CRD to be established), another custom resource in a second item
// depending on the first, a Deployment that is ready only once the test
// sets its status (no kubelet here), a custom readiness check, removed
// manifests deleted, and destroy in deletion groups.
func TestAccExecution_manifestCRDsReadinessAndDeletion(t *testing.T) {
	if kubeEnv == nil {
		t.Skip("acceptance tests only (TF_ACC)")
	}
	const ns = "acc-manifest"
	crd := `{ manifest = {
      apiVersion = "apiextensions.k8s.io/v1", kind = "CustomResourceDefinition"
      metadata   = { name = "widgets.example.com" }
      spec = {
        group = "example.com", scope = "Namespaced"
        names = { kind = "Widget", plural = "widgets", singular = "widget", listKind = "WidgetList" }
        versions = [{ name = "v1", served = true, storage = true,
          schema = { openAPIV3Schema = { type = "object", "x-kubernetes-preserve-unknown-fields" = true } } }]
      }
    } }`
	widget := func(name string, size int) string {
		return fmt.Sprintf(`{ manifest = { apiVersion = "example.com/v1", kind = "Widget", metadata = { name = %q, namespace = %q }, spec = { size = %d } } }`, name, ns, size)
	}
	nsManifest := fmt.Sprintf(`{ manifest = { apiVersion = "v1", kind = "Namespace", metadata = { name = %q } } }`, ns)
	deployment := fmt.Sprintf(`{ manifest = {
      apiVersion = "apps/v1", kind = "Deployment", metadata = { name = "web", namespace = %q }
      spec = { replicas = 1, selector = { matchLabels = { app = "web" } },
        template = { metadata = { labels = { app = "web" } }, spec = { containers = [{ name = "web", image = "example.invalid/web:1" }] } } }
    } }`, ns)
	deletion := `{ deletionGroups = [
      { customResourceGroup = { resources = [{ apiVersion = "example.com/v1", kind = "Widget" }] } },
      { predefinedResourceGroup = { type = "namespaced-resources" } },
      { predefinedResourceGroup = { type = "cluster-scoped-resources" } },
      { predefinedResourceGroup = { type = "crds" } },
    ] }`
	readiness := fmt.Sprintf(`{ readinessChecks = { custom = [{
      name = "size-three-or-four"
      resourceSelector = [{ apiVersion = "example.com/v1", kind = "Widget", name = "second", namespace = %q }]
      requirements = [{ jsonPath = ".spec.size", operator = "in", values = [{ value = 3 }, { value = 4 }] }]
    }] } }`, ns)
	config := func(firstWidgets ...string) string {
		return clusterExecution("crds", map[string]string{
			"base":   manifestItem("["+strings.Join(append([]string{nsManifest, crd}, firstWidgets...), ", ")+"]", deletion),
			"second": manifestItem("["+widget("second", 3)+"]", readiness, "base"),
			"web":    manifestItem("["+deployment+"]", "{}", "base"),
		})
	}
	cs := clientset(t)
	// No kubelet runs here: once the Deployment exists, report it ready.
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
			if err != nil || d.Status.ReadyReplicas == 1 {
				continue
			}
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
			_, _ = cs.AppsV1().Deployments(ns).UpdateStatus(context.Background(), d, metav1.UpdateOptions{})
		}
	}()
	widgetExists := func(name string) bool {
		_, err := kubeCluster(t).Get(context.Background(), widgetGVK, ns, name)
		return err == nil
	}
	app := "landscaper_execution.crds"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := cs.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("the Deployment outlived the destroy: %v", err)
			}
			if _, err := kubeCluster(t).Get(context.Background(), schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1",
				Kind: "CustomResourceDefinition"}, "", "widgets.example.com"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("the CRD outlived the destroy: %v", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: config(widget("first", 1), widget("extra", 1)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(app, statusItem("second").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
					statecheck.ExpectKnownValue(app, statusItem("web").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
				},
				Check: func(*terraform.State) error {
					for _, w := range []string{"first", "extra", "second"} {
						if !widgetExists(w) {
							return fmt.Errorf("widget %s missing", w)
						}
					}
					return nil
				},
			},
			{
				// A manifest removed from the config is deleted.
				Config: config(widget("first", 1)),
				Check: func(*terraform.State) error {
					if widgetExists("extra") {
						return fmt.Errorf("the removed widget still exists")
					}
					if !widgetExists("first") {
						return fmt.Errorf("the kept widget is gone")
					}
					return nil
				},
			},
		},
	})
}

// Every update strategy and policy, as Landscaper defines them, seen
// through Terraform: values changed outside Terraform are kept or
// overwritten as each strategy says; keep outlives destroy, ignore is
// never applied, immutable is not updated, fallback leaves an object
// another deploy item manages alone.
func TestAccExecution_manifestStrategiesAndPolicies(t *testing.T) {
	if kubeEnv == nil {
		t.Skip("acceptance tests only (TF_ACC)")
	}
	const ns = "acc-strategies"
	cm := func(name, policy, value string) string {
		return fmt.Sprintf(`{ policy = %q, manifest = { apiVersion = "v1", kind = "ConfigMap", metadata = { name = %q, namespace = %q }, data = { a = %q } } }`,
			policy, name, ns, value)
	}
	config := func(v string) string {
		// The namespace is the test's: deleting it would take the kept
		// objects with it.
		items := map[string]string{
			"policies": manifestItem("["+strings.Join([]string{cm("keep", "keep", v), cm("ignore", "ignore", v),
				cm("immutable", "immutable", v), cm("fallback", "fallback", v)}, ", ")+"]", "{}"),
		}
		for _, s := range []string{"update", "patch", "merge", "mergeOverwrite"} {
			items["strategy-"+strings.ToLower(s)] = manifestItem("["+cm("s-"+strings.ToLower(s), "manage", v)+"]",
				fmt.Sprintf(`{ updateStrategy = %q }`, s))
		}
		return clusterExecution("strategies", items)
	}
	cs := clientset(t)
	get := func(name string) (map[string]string, bool) {
		c, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return nil, false
		}
		return c.Data, true
	}
	// Changes made outside Terraform: a changed value and an added one.
	tamper := func() {
		for _, s := range []string{"update", "patch", "merge", "mergeoverwrite"} {
			c, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "s-"+s, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			c.Data = map[string]string{"a": "outside", "b": "outside"}
			if _, err := cs.CoreV1().ConfigMaps(ns).Update(context.Background(), c, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	expect := func(name, a, b string) error {
		d, ok := get(name)
		if !ok || d["a"] != a || d["b"] != b {
			return fmt.Errorf("%s: data %v (exists %v), want a=%q b=%q", name, d, ok, a, b)
		}
		return nil
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, ok := get("keep"); !ok {
				return fmt.Errorf("policy keep: the object did not outlive the destroy")
			}
			if _, ok := get("fallback"); !ok {
				return fmt.Errorf("policy fallback: another owner's object was deleted")
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				// Another deploy item already manages "fallback".
				PreConfig: func() {
					_, _ = cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
					_, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
						ObjectMeta: metav1.ObjectMeta{Name: "fallback", Namespace: ns,
							Labels: map[string]string{"manifest.deployer.landscaper.gardener.cloud/deployitem": "someone-else"}},
						Data: map[string]string{"a": "theirs"},
					}, metav1.CreateOptions{})
					if err != nil && !apierrors.IsAlreadyExists(err) {
						t.Fatal(err)
					}
				},
				Config: config("1"),
				Check: func(*terraform.State) error {
					if _, ok := get("ignore"); ok {
						return fmt.Errorf("policy ignore: the object was applied")
					}
					for _, err := range []error{expect("keep", "1", ""), expect("immutable", "1", ""), expect("fallback", "theirs", ""), expect("s-update", "1", "")} {
						if err != nil {
							return err
						}
					}
					return nil
				},
			},
			{
				PreConfig: tamper,
				Config:    config("2"),
				Check: func(*terraform.State) error {
					for _, err := range []error{
						expect("s-update", "2", ""),                // replaced
						expect("s-patch", "2", ""),                 // merge patch from live to manifest
						expect("s-merge", "outside", "outside"),    // live values win
						expect("s-mergeoverwrite", "2", "outside"), // manifest values win
						expect("immutable", "1", ""),               // never updated
						expect("keep", "2", ""),                    // managed until destroy
						expect("fallback", "theirs", ""),           // someone else's
					} {
						if err != nil {
							return err
						}
					}
					return nil
				},
			},
		},
	})
}

// The API server is stopped when an apply starts and comes back a few
// seconds later: the item's calls fail transiently, are retried with
// backoff, and the item succeeds within its timeout. Not parallel: the
// control plane is the package's.
func TestAccExecution_manifestSurvivesAnAPIServerRestart(t *testing.T) {
	if kubeEnv == nil {
		t.Skip("acceptance tests only (TF_ACC)")
	}
	const ns = "acc-restart"
	cfg := clusterExecution("restart", map[string]string{
		"cm": manifestItem(fmt.Sprintf(`[
      { manifest = { apiVersion = "v1", kind = "Namespace", metadata = { name = %[1]q } } },
      { manifest = { apiVersion = "v1", kind = "ConfigMap", metadata = { name = "survivor", namespace = %[1]q }, data = { a = "1" } } },
    ]`, ns), "{}"),
	})
	restarted := make(chan error, 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() {
				if err := kubeEnv.StopAPIServer(); err != nil {
					t.Fatal(err)
				}
				go func() {
					time.Sleep(5 * time.Second)
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					restarted <- kubeEnv.StartAPIServer(ctx)
				}()
			},
			Config: cfg,
			Check: func(*terraform.State) error {
				if err := <-restarted; err != nil {
					return fmt.Errorf("restarting the API server: %w", err)
				}
				if _, ok := configMapData(t, ns, "survivor"); !ok {
					return fmt.Errorf("the ConfigMap was not created after the restart")
				}
				return nil
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("landscaper_execution.restart", statusItem("cm").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
			},
		}},
	})
}
