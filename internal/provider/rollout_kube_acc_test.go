//go:build unix

package provider

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// playKubelet stands in for the workload controllers and the kubelet the
// test cluster does not run: each Deployment in namespaces gets one pod of
// its template (pods of an older template are deleted), which is Running
// and Ready, its container restarted as often as restarts says for its
// image (0 when absent).
func playKubelet(t *testing.T, namespaces []string, restarts map[string]int32) {
	cs := clientset(t)
	ctx := context.Background()
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			for _, ns := range namespaces {
				ds, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					continue
				}
				for _, d := range ds.Items {
					image := d.Spec.Template.Spec.Containers[0].Image
					name := fmt.Sprintf("%s-%x", d.Name, sha256.Sum256([]byte(image)))[:len(d.Name)+9]
					pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(d.Spec.Selector)})
					if err != nil {
						continue
					}
					var p *corev1.Pod
					for i := range pods.Items {
						if pods.Items[i].Name == name {
							p = &pods.Items[i]
						} else {
							_ = cs.CoreV1().Pods(ns).Delete(ctx, pods.Items[i].Name, metav1.DeleteOptions{})
						}
					}
					if p == nil {
						pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: d.Spec.Template.Labels},
							Spec: d.Spec.Template.Spec}
						if p, err = cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
							continue
						}
					}
					want := restarts[image]
					if len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount == want {
						continue
					}
					now := metav1.Now()
					p.Status = corev1.PodStatus{
						Phase:      corev1.PodRunning,
						Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
						ContainerStatuses: []corev1.ContainerStatus{{Name: "web", Image: image, ImageID: image, Ready: true,
							RestartCount: want, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}},
					}
					_, _ = cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
				}
			}
		}
	}()
}

// A rollout of a Deployment to three namespaces (standing in for three
// clusters): healthy pods complete it; a new image whose canary pods
// restart too often pauses it with the rest left on the old image.
func TestAccExecutionRollout_kubernetesPodsHealth(t *testing.T) {
	if kubeEnv == nil {
		t.Skip("acceptance tests only (TF_ACC)")
	}
	namespaces := []string{"acc-rollout-0", "acc-rollout-1", "acc-rollout-2"}
	playKubelet(t, namespaces, map[string]int32{"example.invalid/web:crash": 4})
	config := func(image string) string {
		items := map[string]string{}
		for i, ns := range namespaces {
			manifests := fmt.Sprintf(`[{ manifest = { apiVersion = "v1", kind = "Namespace", metadata = { name = %[1]q } } },
        { manifest = {
          apiVersion = "apps/v1", kind = "Deployment", metadata = { name = "web", namespace = %[1]q }
          spec = { replicas = 1, selector = { matchLabels = { app = "web" } },
            template = { metadata = { labels = { app = "web" } }, spec = { containers = [{ name = "web", image = %[2]q }] } } }
        } }]`, ns, image)
			it := manifestItem(manifests, `{ readinessChecks = { disableDefault = true } }`)
			items[fmt.Sprintf("m%d", i)] = strings.Replace(it, `target     = "cluster"`, `target     = "cluster"`+"\n      rollout_group = \"fleet\"", 1)
		}
		c := clusterExecution("app", items)
		return strings.Replace(c, "  deploy_items = {", `  rollout = {
    canary     = { members = ["m1"] }
    duration   = "3s"
    auto_pause = { max_restarts = 2 }
    auto_fail  = { max_restarts = 10 }
  }
  deploy_items = {`, 1)
	}
	images := func(want map[string]string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			cs := clientset(t)
			for i, ns := range namespaces {
				d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
				if err != nil {
					return err
				}
				m := fmt.Sprintf("m%d", i)
				if got := d.Spec.Template.Spec.Containers[0].Image; got != want[m] {
					return fmt.Errorf("%s runs %s, want %s", m, got, want[m])
				}
			}
			return nil
		}
	}
	v1 := "example.invalid/web:1"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(v1),
				Check:  images(map[string]string{"m0": v1, "m1": v1, "m2": v1}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(app, rolloutStatus("phase"), knownvalue.StringExact("Completed")),
					statecheck.ExpectKnownValue(app, rolloutStatus("members", "m1", "restarts"), knownvalue.Int64Exact(0)),
				},
			},
			{
				Config: config("example.invalid/web:crash"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					rolloutPlanIs("[m1]", "[[m0 m2]]", "[]"),
				}},
				ExpectError: wrapRe(`(?s)Rollout of group "fleet" paused: the canary restarted too often.*canary member m1 restarted 4 times during the bake: pod acc-rollout-1/web-[0-9a-f]+ container web restarted 4 times.*New spec \(revision [0-9a-f]+\): m1\s.*Old spec: m0, m2`),
			},
			{
				// The state says so; the cluster agrees.
				Config: config("example.invalid/web:crash"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					priorIs(map[string]string{"status.rollout.fleet.phase": "CanaryPaused", "status.rollout.fleet.members.m1.restarts": "4",
						"status.rollout.fleet.members.m1.new_spec": "true", "status.rollout.fleet.members.m0.new_spec": "false"}),
					rolloutPlanIs("[]", "[]", "[m0 m2]"),
				}},
				ExpectError: wrapRe(`Rollout of group "fleet" paused`),
			},
			{
				// Back to the image that works: a new spec, a new canary.
				PreConfig: func() {
					if err := images(map[string]string{"m0": v1, "m1": "example.invalid/web:crash", "m2": v1})(nil); err != nil {
						t.Fatal(err)
					}
				},
				Config: config(v1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					rolloutPlanIs("[m1]", "[]", "[]"),
				}},
				Check: images(map[string]string{"m0": v1, "m1": v1, "m2": v1}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(app, rolloutStatus("phase"), knownvalue.StringExact("Completed")),
					statecheck.ExpectKnownValue(app, tfjsonpath.New("status").AtMapKey("rollout").AtMapKey("fleet").AtMapKey("members"),
						knownvalue.MapSizeExact(3)),
				},
			},
		},
	})
}

// fleetKubeSubBlueprint renders a sub-installation "web-<key>" per key
// of "clusters", each given the namespace "<prefix>-<key>".
var fleetKubeSubBlueprint = perKeySubBlueprint("web", []string{"image"}, []string{"prefix"},
	"          importDataMappings:\n            namespace: {{ printf \"%s-%s\" $.imports.prefix $key }}\n")

const fleetKubeMemberBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: image, type: data, schema: {type: string}}
  - {name: namespace, type: data, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: web
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            updateStrategy: update
            readinessChecks: {disableDefault: true}
            manifests:
              - policy: manage
                manifest: {apiVersion: v1, kind: Namespace, metadata: {name: {{ .imports.namespace }}}}
              - policy: manage
                manifest:
                  apiVersion: apps/v1
                  kind: Deployment
                  metadata: {name: web, namespace: {{ .imports.namespace }}}
                  spec:
                    replicas: 1
                    selector: {matchLabels: {app: web}}
                    template:
                      metadata: {labels: {app: web}}
                      spec: {containers: [{name: web, image: {{ .imports.image }}}]}
`

// A fleet of sub-installations, one per cluster (three keys on the one
// test cluster, a namespace each): pods that restart too often under a new
// image pause the rollout at the canary, its subtree on the new image and
// the rest untouched; the state says so, and a good image resumes.
func TestAccInstallationRollout_kubernetesSubInstallations(t *testing.T) {
	if kubeEnv == nil {
		t.Skip("acceptance tests only (TF_ACC)")
	}
	keys := []string{"a", "b", "c"}
	var namespaces []string
	for _, k := range keys {
		namespaces = append(namespaces, "acc-subroll-"+k)
	}
	playKubelet(t, namespaces, map[string]int32{"example.invalid/web:crash": 4})
	config := func(image string) string {
		return fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name      = "fleet"
  blueprint = { filesystem = { "blueprint.yaml" = %q } }
  imports   = { image = %q, prefix = "acc-subroll", sub = %q }
  target_maps = { clusters = {
    for k in ["a", "b", "c"] : k => { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file(%q) }) }
  } }
  rollout = {
    canary     = { members = ["b"] }
    duration   = "3s"
    auto_pause = { max_restarts = 2 }
    auto_fail  = { max_restarts = 10 }
  }
}
`, fleetKubeSubBlueprint, image, fleetKubeMemberBlueprint, kubeEnv.KubeconfigPath())
	}
	images := func(want map[string]string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			cs := clientset(t)
			for _, k := range keys {
				d, err := cs.AppsV1().Deployments("acc-subroll-"+k).Get(context.Background(), "web", metav1.GetOptions{})
				if err != nil {
					return err
				}
				if got := d.Spec.Template.Spec.Containers[0].Image; got != want[k] {
					return fmt.Errorf("%s runs %s, want %s", k, got, want[k])
				}
			}
			return nil
		}
	}
	v1, crash := "example.invalid/web:1", "example.invalid/web:crash"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(v1),
				Check:  images(map[string]string{"a": v1, "b": v1, "c": v1}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(inst, instRollout("phase"), knownvalue.StringExact("Completed")),
					statecheck.ExpectKnownValue(inst, instRollout("members", "b", "restarts"), knownvalue.Int64Exact(0)),
				},
			},
			{
				Config: config(crash),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					fleetPlanIs("[b]", "[[a c]]", "[]"),
				}},
				ExpectError: wrapRe(`(?s)Rollout of group "clusters" paused: the canary restarted too often.*canary member b restarted 4 times during the bake: pod acc-subroll-b/web-[0-9a-f]+ container web restarted 4 times.*New spec \(revision [0-9a-f]+\): b\s.*Old spec: a, c`),
			},
			{
				// The state says so; the cluster agrees; the plan holds the rest.
				PreConfig: func() {
					if err := images(map[string]string{"a": v1, "b": crash, "c": v1})(nil); err != nil {
						t.Fatal(err)
					}
				},
				Config: config(crash),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					priorIsOf(inst, map[string]string{"status.rollout.clusters.phase": "CanaryPaused", "status.rollout.clusters.members.b.restarts": "4",
						"status.rollout.clusters.members.b.new_spec": "true", "status.rollout.clusters.members.a.new_spec": "false",
						"status.phase": "Progressing"}),
					fleetPlanIs("[]", "[]", "[a c]"),
				}},
				ExpectError: wrapRe(`Rollout of group "clusters" paused`),
			},
			{
				// Back to the image that works: a new spec, a new canary.
				Config: config(v1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					fleetPlanIs("[b]", "[]", "[]"),
				}},
				Check: images(map[string]string{"a": v1, "b": v1, "c": v1}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(inst, instRollout("phase"), knownvalue.StringExact("Completed")),
					statecheck.ExpectKnownValue(inst, tfjsonpath.New("status").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
				},
			},
		},
	})
}
