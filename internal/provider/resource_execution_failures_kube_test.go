//go:build unix

package provider

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
)

// literalRe matches the parts in order, each literally, with any
// whitespace (Terraform wraps diagnostics) where a part has a space.
func literalRe(parts ...string) *regexp.Regexp {
	quoted := make([]string, len(parts))
	for i, p := range parts {
		quoted[i] = strings.ReplaceAll(regexp.QuoteMeta(p), " ", `\s+`)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(quoted, ".*"))
}

// A Landscaper self target is refused at plan time, by name, with what to
// use instead; nothing runs.
func TestAccExecution_selfTargetRefused(t *testing.T) {
	if kubeEnv == nil {
		t.Skip("acceptance tests only (TF_ACC)")
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
resource "landscaper_execution" "self" {
  name = "self"
  targets = {
    cluster = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ selfConfig = { serviceAccount = { name = "self-serviceaccount" }, expirationSeconds = 3600 } })
    }
  }
  deploy_items = {
    cm = {
      type   = "kubernetes-manifest"
      target = "cluster"
      config = yamlencode({ manifests = [{ manifest = { apiVersion = "v1", kind = "ConfigMap", metadata = { name = "x", namespace = "default" } } }] })
    }
  }
}
`,
			PlanOnly:    true,
			ExpectError: literalRe("Self targets are not supported", `"selfConfig" is a Landscaper self target`, "resource cluster", "kubectl create token"),
		}},
	})
}

// failImagePull does, for the objects of TestAccExecution_waitNamesWhatIsNotReady,
// what the workload controllers and a kubelet would: once the Deployment
// exists, its status says one replica, none available, and its one pod
// cannot pull its image. (The test control plane runs neither.)
func failImagePull(t *testing.T, cs kubernetes.Interface, ns string, done <-chan struct{}) {
	ctx := context.Background()
	for {
		select {
		case <-done:
			return
		case <-time.After(200 * time.Millisecond):
		}
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			continue
		}
		d.Status.ObservedGeneration, d.Status.Replicas, d.Status.UpdatedReplicas = d.Generation, 1, 1
		if _, err := cs.AppsV1().Deployments(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
			t.Errorf("deployment status: %v", err)
			return
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web-7d9c", Namespace: ns, Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.invalid/web:1"}}},
		}
		p, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Errorf("pod: %v", err)
			return
		}
		p.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "web", Image: "registry.invalid/web:1",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
				Reason: "ImagePullBackOff", Message: `Back-off pulling image "registry.invalid/web:1"`}},
		}}}
		if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Errorf("pod status: %v", err)
		}
		return
	}
}

// clusterTargetsHCL is the targets attribute of a landscaper_execution
// with the target cluster whose kubeconfig file is the first argument of
// the configuration's format.
const clusterTargetsHCL = `  targets = {
    cluster = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = file(%[1]q) })
    }
  }
`

// A wait that does not end says what it waited for: the Deployment that
// never becomes available with what its pod says, and the Job a custom
// readiness check waits on, in the diagnostic and in the item's status.
func TestAccExecution_waitNamesWhatIsNotReady(t *testing.T) {
	kubeconfig, cs := helmCluster(t)
	const ns = "tf-acc-wait"
	config := fmt.Sprintf(`
resource "landscaper_execution" "app" {
  name = "wait"
`+clusterTargetsHCL+`  deploy_items = {
    app = {
      type    = "kubernetes-manifest"
      target  = "cluster"
      timeout = "20s"
      config = yamlencode({
        manifests = [
          { manifest = { apiVersion = "v1", kind = "Namespace", metadata = { name = %[2]q } } },
          { manifest = {
            apiVersion = "apps/v1", kind = "Deployment", metadata = { name = "web", namespace = %[2]q }
            spec = {
              replicas = 1
              selector = { matchLabels = { app = "web" } }
              template = {
                metadata = { labels = { app = "web" } }
                spec     = { containers = [{ name = "web", image = "registry.invalid/web:1" }] }
              }
            }
          } },
          { manifest = {
            apiVersion = "batch/v1", kind = "Job", metadata = { name = "migrate", namespace = %[2]q }
            spec = { template = { spec = {
              restartPolicy = "Never"
              containers    = [{ name = "migrate", image = "registry.invalid/migrate:1" }]
            } } }
          } },
        ]
        readinessChecks = { custom = [{
          name             = "migrated"
          resourceSelector = [{ apiVersion = "batch/v1", kind = "Job", name = "migrate", namespace = %[2]q }]
          requirements     = [{ jsonPath = ".status.succeeded", operator = "==", values = [{ value = 1 }] }]
        }] }
      })
    }
  }
}
`, kubeconfig, ns)
	want := []string{
		`Deploy item "app" failed`, "did not finish within its timeout of 20s; still waiting for:",
		`Deployment tf-acc-wait/web: 0 of 1 replicas available (pod web-7d9c: container web: ImagePullBackOff: Back-off pulling image "registry.invalid/web:1")`,
		`Job tf-acc-wait/migrate: not complete (0 active, 0 succeeded, 0 failed pods), custom readiness check "migrated": requirement .status.succeeded == 1 not met`,
		"ERR_TIMEOUT",
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			close(done)
		}
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := cs.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("deployment left after destroy: %v", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				PreConfig:   func() { go failImagePull(t, cs, ns, done) },
				Config:      config,
				ExpectError: literalRe(want...),
			},
			{
				// The status says the same: a user without kubectl reads it
				// from the state.
				RefreshState:       true,
				ExpectNonEmptyPlan: true,
				Check: resource.TestCheckResourceAttrWith("landscaper_execution.app", "status.deploy_items.app.last_error.message", func(v string) error {
					for _, w := range want[1 : len(want)-1] {
						if !strings.Contains(v, w) {
							return fmt.Errorf("status message %q does not say %q", v, w)
						}
					}
					return nil
				}),
			},
		},
	})
}

// restrictedKubeconfig writes a kubeconfig of a ServiceAccount of ns that
// may do nothing but what every authenticated user may (discovery).
func restrictedKubeconfig(t *testing.T, cs kubernetes.Interface, ns, sa string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	exp := int64(3600)
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: %q, certificate-authority-data: %s}
users:
- name: %s
  user: {token: %s}
contexts:
- name: test
  context: {cluster: test, user: %s, namespace: %s}
current-context: test
`, kubeEnv.Host(), base64.StdEncoding.EncodeToString(kubeEnv.CAData()), sa, tok.Status.Token, sa, ns)
	path := filepath.Join(t.TempDir(), "restricted-kubeconfig")
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A forbidden request fails its item at once, for the manifest deployer,
// a helm release and helm's manifest mode alike, with the API server's
// words (who, which verb, which object) and ERR_UNAUTHORIZED; once the
// permission is granted, the next apply finishes the job.
func TestAccExecution_forbiddenFailsAtOnce(t *testing.T) {
	_, cs := helmCluster(t)
	const ns, sa = "tf-acc-rbac", "restricted"
	kubeconfig := restrictedKubeconfig(t, cs, ns, sa)
	chartDir := helmtest.Dir(t, helmtest.Workload)
	execution := func(name, itemType, config string) string {
		return fmt.Sprintf(`
resource "landscaper_execution" %[1]q {
  name = %[1]q
  targets = {
    cluster = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = file(%[2]q) })
    }
  }
  deploy_items = {
    item = {
      type    = %[3]q
      target  = "cluster"
      timeout = "5m"
      config  = yamlencode(%[4]s)
    }
  }
}
`, name, kubeconfig, itemType, config)
	}
	config := execution("manifest", "kubernetes-manifest", fmt.Sprintf(`{
        manifests = [{ manifest = { apiVersion = "v1", kind = "ConfigMap", metadata = { name = "plain", namespace = %q }, data = { a = "b" } } }]
      }`, ns)) +
		execution("release", "helm", fmt.Sprintf(`{
        name = "release", namespace = %q, chart = { archive = { remote = { url = %q } } }, values = { message = "hi" }
      }`, ns, chartDir)) +
		execution("rendered", "helm", fmt.Sprintf(`{
        name = "rendered", namespace = %q, helmDeployment = false, chart = { archive = { remote = { url = %q } } }, values = { message = "hi" }
      }`, ns, chartDir))
	user := fmt.Sprintf(`User "system:serviceaccount:%s:%s" cannot`, ns, sa)
	var start time.Time
	unauthorized := func(name, verb string) resource.TestCheckFunc {
		at := "landscaper_execution." + name
		return resource.ComposeTestCheckFunc(
			resource.TestCheckResourceAttr(at, "status.deploy_items.item.last_error.codes.0", "ERR_UNAUTHORIZED"),
			resource.TestCheckResourceAttrWith(at, "status.deploy_items.item.last_error.message", func(v string) error {
				if !strings.Contains(v, user) || !strings.Contains(v, verb) {
					return fmt.Errorf("%s: %q does not name the user and %q", name, v, verb)
				}
				return nil
			}))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig:   func() { start = time.Now() },
				Config:      config,
				ExpectError: literalRe(`Deploy item "item" failed`, "ERR_UNAUTHORIZED", user),
			},
			{
				// Each item would have retried for its five minutes.
				PreConfig: func() {
					if d := time.Since(start); d > time.Minute {
						t.Fatalf("the forbidden items took %s to fail", d)
					}
					t.Logf("three forbidden items failed within %s", time.Since(start).Round(time.Millisecond))
				},
				RefreshState:       true,
				ExpectNonEmptyPlan: true,
				Check: resource.ComposeTestCheckFunc(
					unauthorized("manifest", `cannot get resource "configmaps"`),
					unauthorized("release", `cannot list resource "secrets"`),
					unauthorized("rendered", `cannot get resource "configmaps"`),
				),
			},
			{
				PreConfig: func() {
					rb := &rbacv1.RoleBinding{
						ObjectMeta: metav1.ObjectMeta{Name: "restricted-admin", Namespace: ns},
						Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
						// cluster-admin, not the aggregated admin: the test control
						// plane runs no aggregation controller.
						RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
					}
					if _, err := cs.RbacV1().RoleBindings(ns).Create(context.Background(), rb, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
					// The authorizer learns of the binding from a watch.
					rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
					if err != nil {
						t.Fatal(err)
					}
					restricted := kubernetes.NewForConfigOrDie(rc)
					for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
						_, err := restricted.CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{})
						if err == nil {
							break
						}
						if time.Now().After(deadline) {
							t.Fatalf("the binding does not take effect: %v", err)
						}
					}
				},
				Config: config,
			},
		},
	})
}

// The objects of a helm release are watched as the manifest deployer
// watches its own: a deleted object or a changed field the chart sets
// plans an update, whose apply (a helm upgrade with the same chart and
// values) repairs it; fields the chart does not set stay as they are.
func TestAccExecution_helmReleaseDrift(t *testing.T) {
	kubeconfig, cs := helmCluster(t)
	chartDir := helmtest.Dir(t, helmtest.Workload)
	const ns = "tf-acc-helm-drift"
	const clusterRole = ns + "-drift-reader"
	config := fmt.Sprintf(`
resource "landscaper_execution" "app" {
  name = "helm-drift"
`+clusterTargetsHCL+`  deploy_items = {
    web = {
      type   = "helm"
      target = "cluster"
      config = yamlencode({
        name = "drift", namespace = %[2]q, createNamespace = true
        chart = { archive = { remote = { url = %[3]q } } }, values = { message = "hi", clusterRole = true }
      })
    }
  }
}
`, kubeconfig, ns, chartDir)
	ctx := context.Background()
	cms := func() interface {
		Get(context.Context, string, metav1.GetOptions) (*corev1.ConfigMap, error)
		Update(context.Context, *corev1.ConfigMap, metav1.UpdateOptions) (*corev1.ConfigMap, error)
		Delete(context.Context, string, metav1.DeleteOptions) error
	} {
		return cs.CoreV1().ConfigMaps(ns)
	}
	edit := func(f func(*corev1.ConfigMap)) func() {
		return func() {
			cm, err := cms().Get(ctx, "drift-config", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			f(cm)
			if _, err := cms().Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	configMap := func(message string, labels map[string]string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			cm, err := cms().Get(ctx, "drift-config", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if cm.Data["message"] != message {
				return fmt.Errorf("message %q, want %q", cm.Data["message"], message)
			}
			for k, v := range labels {
				if cm.Labels[k] != v {
					return fmt.Errorf("label %s=%q, want %q", k, cm.Labels[k], v)
				}
			}
			return nil
		}
	}
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction("landscaper_execution.app", plancheck.ResourceActionUpdate),
	}}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config, Check: configMap("hi", nil)},
			{
				// Deleted outside Terraform: planned, and recreated.
				PreConfig: func() {
					if err := cms().Delete(ctx, "drift-config", metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:           config,
				ConfigPlanChecks: update,
				Check:            configMap("hi", nil),
			},
			{
				// A field the chart sets changed, and a label it does not
				// set added: the field is set back, the label stays.
				PreConfig: edit(func(cm *corev1.ConfigMap) {
					cm.Data["message"] = "tampered"
					if cm.Labels == nil {
						cm.Labels = map[string]string{}
					}
					cm.Labels["team"] = "blue"
				}),
				Config:           config,
				ConfigPlanChecks: update,
				Check:            configMap("hi", map[string]string{"team": "blue"}),
			},
			{
				// Only an unmanaged field changed: nothing to do.
				PreConfig: edit(func(cm *corev1.ConfigMap) {
					if cm.Annotations == nil {
						cm.Annotations = map[string]string{}
					}
					cm.Annotations["note"] = "by hand"
				}),
				Config:   config,
				PlanOnly: true,
			},
			{
				// A cluster-scoped object of the release is compared as
				// closely: a ClusterRole's rules widened by hand are set back.
				PreConfig: func() {
					cr, err := cs.RbacV1().ClusterRoles().Get(ctx, clusterRole, metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					cr.Rules[0].Verbs = append(cr.Rules[0].Verbs, "delete")
					if _, err := cs.RbacV1().ClusterRoles().Update(ctx, cr, metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:           config,
				ConfigPlanChecks: update,
				Check: func(*terraform.State) error {
					cr, err := cs.RbacV1().ClusterRoles().Get(ctx, clusterRole, metav1.GetOptions{})
					if err != nil {
						return err
					}
					if v := cr.Rules[0].Verbs; !slices.Equal(v, []string{"get", "list"}) {
						return fmt.Errorf("the ClusterRole's verbs are %v, want [get list]", v)
					}
					return nil
				},
			},
		},
	})
}

// helm's own wait says only that its time ran out; the item's error
// names the release's objects that are not ready, and the failed
// requirement of the item's custom readiness checks.
func TestAccExecution_helmWaitNamesWhatIsNotReady(t *testing.T) {
	kubeconfig, _ := helmCluster(t)
	chartDir := helmtest.Dir(t, helmtest.Workload)
	const ns = "tf-acc-helm-wait"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "landscaper_execution" "app" {
  name = "helm-wait"
`+clusterTargetsHCL+`  deploy_items = {
    web = {
      type    = "helm"
      target  = "cluster"
      timeout = "20s"
      config = yamlencode({
        name = "slow", namespace = %[2]q, createNamespace = true
        chart  = { archive = { remote = { url = %[3]q } } }
        values = { deployment = true }
        helmDeploymentConfig = { install = { wait = true, timeout = "3s" }, upgrade = { wait = true, timeout = "3s" } }
        readinessChecks = { custom = [{
          name             = "configured"
          resourceSelector = [{ apiVersion = "v1", kind = "ConfigMap", name = "slow-config", namespace = %[2]q }]
          requirements     = [{ jsonPath = ".data.message", operator = "==", values = [{ value = "ready" }] }]
        }] }
      })
    }
  }
}
`, kubeconfig, ns, chartDir),
			ExpectError: literalRe(`Deploy item "web" failed`, "did not finish within its timeout of 20s; last error:",
				"context deadline exceeded; not ready: Deployment tf-acc-helm-wait/slow: its controller has not yet seen generation",
				`ConfigMap tf-acc-helm-wait/slow-config: custom readiness check "configured": requirement .data.message == "ready" not met`,
				"ERR_TIMEOUT"),
		}},
	})
}
