package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/moved/movedtest"
)

// movedWorkspace is a workspace holding only the recorded resource r in
// its state, with the test control plane's kubeconfig and a configuration
// that moves r to landscaper_execution.app (body: the resource, whose
// target "cluster" is the control plane).
//
// Terraform refuses to plan a state that names a provider which is not
// installed ("Missing required provider", checkStateDependencies), and
// asks it for its schema to render the plan, even though a move across
// types calls only the destination provider. So the source provider is a
// stub that answers for its schema and nothing else (stubProvider).
func movedWorkspace(t *testing.T, r movedtest.Recorded, body string) *acctest.Workspace {
	t.Helper()
	w := newWorkspace(t)
	installStubProvider(t, w, r.Provider)
	acctest.WriteFile(t, w.Path("kubeconfig"), kubeEnv.Kubeconfig())
	acctest.WriteFile(t, w.Path("terraform.tfstate"), string(r.StateFile(t)))
	w.Config(fmt.Sprintf(`
provider "landscaper" {
  targets = {
    cluster = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
  }
}

moved {
  from = %s.%s
  to   = landscaper_execution.app
}
%s`, r.Type, r.Name, body))
	return w
}

// sourceAddress is registry.terraform.io/hashicorp/helm as dev_overrides
// names it: hashicorp/helm.
func sourceAddress(provider string) string {
	parts := strings.Split(provider, "/")
	return strings.Join(parts[len(parts)-2:], "/")
}

// planMove plans the move and checks that the plan moves the resource and
// says what it adopts.
func planMove(t *testing.T, w *acctest.Workspace, r movedtest.Recorded, adopts string) {
	t.Helper()
	out, code := w.PlanExitCode()
	if code != 2 {
		t.Fatalf("plan of the move exited %d, want 2 (changes):\n%s", code, out)
	}
	for _, want := range []string{
		fmt.Sprintf("# landscaper_execution.app will be updated in-place\n  # (moved from %s.%s)", r.Type, r.Name),
		adopts,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("the plan does not say %q:\n%s", want, out)
		}
	}
}

func clients(t *testing.T, kubeconfigPath string) (*kubernetes.Clientset, *dynamic.DynamicClient) {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(rc), dynamic.NewForConfigOrDie(rc)
}

// recordedValues are the values the helm provider installed the recorded
// release with (metadata.values, with set_sensitive cloaked), with the
// cloaked ones given.
func recordedValues(t *testing.T, r movedtest.Recorded, sensitive map[string]any) map[string]any {
	t.Helper()
	var metas []struct{ Values string }
	if err := json.Unmarshal(r.Attributes["metadata"], &metas); err != nil {
		var one struct{ Values string }
		if err := json.Unmarshal(r.Attributes["metadata"], &one); err != nil {
			t.Fatal(err)
		}
		metas = append(metas, one)
	}
	var values map[string]any
	if err := json.Unmarshal([]byte(metas[0].Values), &values); err != nil {
		t.Fatal(err)
	}
	for k, v := range sensitive {
		values[k] = v
	}
	return values
}

// TestMovedFromHelmRelease moves helm_release, as helm provider 2.17.0
// (the chart from a chart repository) and 3.1.2 (a local chart directory,
// a set_sensitive value) recorded it, with the release installed at
// revision 1: the plan says it adopts the release, the apply upgrades it
// in place (revision 2, the objects keep their UIDs), and the next plan
// is empty.
func TestMovedFromHelmRelease(t *testing.T) {
	for _, c := range []struct {
		file, ns, chart string
		sensitive       map[string]any
		values          string
	}{
		{file: movedtest.Helm2, ns: "moved-helm2",
			values: `{ message = "from-helm2", nested = { color = "green" }, replicas = 2 }`},
		{file: movedtest.Helm3, ns: "moved-helm3", chart: `{ archive = { remote = { url = "./demo" } } }`,
			sensitive: map[string]any{"message": "from-helm3"},
			values:    `{ message = var.message, nested = { color = "red" } }`},
	} {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			r := movedtest.Load(t, c.file)
			chart := c.chart
			if chart == "" {
				repo := helmtest.NewRepo(t)
				repo.Add(t, helmtest.Archive(t, helmtest.Demo, ""))
				r = r.With(t, "repository", repo.URL)
				chart = fmt.Sprintf(`{ helmChartRepo = { helmChartRepoUrl = %q, helmChartName = "demo", helmChartVersion = "0.1.0" } }`, repo.URL)
			}
			w := movedWorkspace(t, r, fmt.Sprintf(`
variable "message" {
  type      = string
  sensitive = true
  default   = "from-helm3"
}

resource "landscaper_execution" "app" {
  name    = %[1]q
  targets = { cluster = { name = "cluster" } }
  deploy_items = {
    release = {
      type   = "helm"
      target = "cluster"
      config = jsonencode({
        name            = %[1]q
        namespace       = %[1]q
        createNamespace = true
        chart           = %[2]s
        values          = %[3]s
      })
    }
  }
}
`, c.ns, chart, c.values))
			if c.chart != "" {
				if err := os.Rename(helmtest.Dir(t, helmtest.Demo), w.Path("demo")); err != nil {
					t.Fatal(err)
				}
			}
			installDemoRelease(t, w.Path("kubeconfig"), c.ns, c.ns, recordedValues(t, r, c.sensitive))
			cs, _ := clients(t, w.Path("kubeconfig"))
			before := helmtest.DemoUIDs(t, cs, c.ns, c.ns)

			planMove(t, w, r, fmt.Sprintf(`Deploy item "release" adopts helm release %s/%s`, c.ns, c.ns))
			w.Apply()
			if got := strings.Join(helmtest.History(t, cs, c.ns, c.ns), ","); got != "1:superseded,2:deployed" {
				t.Fatalf("release history %s, want revision 1 upgraded in place to 2", got)
			}
			if after := helmtest.DemoUIDs(t, cs, c.ns, c.ns); after != before {
				t.Fatalf("the release's objects were re-created: UIDs %s, were %s", after, before)
			}
			if out, code := w.PlanExitCode(); code != 0 {
				t.Fatalf("plan after the move exited %d:\n%s", code, out)
			}
		})
	}
}

// TestMovedFromManifests moves kubernetes_manifest (kubernetes provider
// 2.38.0) and kubectl_manifest (alekc/kubectl 2.4.1, gavinbunney/kubectl
// 1.19.0) as recorded, with their ConfigMap in the cluster as the source
// provider left it (no label of ours): the plan says it adopts the
// ConfigMap, the apply updates it in place (same UID) and labels it as
// the item's, and the next plan is empty.
func TestMovedFromManifests(t *testing.T) {
	for _, file := range []string{movedtest.Kubernetes, movedtest.Alekc, movedtest.Gavinbunney} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			r := movedtest.Load(t, file)
			obj := recordedObject(t, r)
			name := obj.GetName()
			manifest, err := json.Marshal(obj.Object)
			if err != nil {
				t.Fatal(err)
			}
			w := movedWorkspace(t, r, fmt.Sprintf(`
resource "landscaper_execution" "app" {
  name    = %q
  targets = { cluster = { name = "cluster" } }
  deploy_items = {
    manifest = {
      type   = "kubernetes-manifest"
      target = "cluster"
      config = jsonencode({ manifests = [{ manifest = jsondecode(%q) }] })
    }
  }
}
`, name, manifest))
			_, dc := clients(t, w.Path("kubeconfig"))
			cms := dc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
			created, err := cms.Create(t.Context(), obj, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}

			planMove(t, w, r, fmt.Sprintf(`Deploy item "manifest" adopts ConfigMap default/%s`, name))
			w.Apply()
			live, err := cms.Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if live.GetUID() != created.GetUID() {
				t.Fatalf("the ConfigMap was re-created: UID %s, was %s", live.GetUID(), created.GetUID())
			}
			if got, want := live.GetLabels()[kube.ManifestManagedLabel], name+".manifest"; got != want {
				t.Fatalf("label %s=%q, want %q", kube.ManifestManagedLabel, got, want)
			}
			if out, code := w.PlanExitCode(); code != 0 {
				t.Fatalf("plan after the move exited %d:\n%s", code, out)
			}
		})
	}
}

// recordedObject is the object the recorded manifest resource applied,
// as its manifest or YAML says, in its namespace.
func recordedObject(t *testing.T, r movedtest.Recorded) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	switch r.Type {
	case "kubernetes_manifest":
		var dv struct{ Value map[string]any }
		if err := json.Unmarshal(r.Attributes["manifest"], &dv); err != nil {
			t.Fatal(err)
		}
		u.Object = dv.Value
	default:
		var body, ns string
		_ = json.Unmarshal(r.Attributes["yaml_body"], &body)
		_ = json.Unmarshal(r.Attributes["namespace"], &ns)
		if err := yaml.Unmarshal([]byte(body), &u.Object); err != nil {
			t.Fatal(err)
		}
		u.SetNamespace(ns)
	}
	return u
}

// A move that would lose what the source held is refused at plan time,
// naming the attribute, and leaves the state as it was. Without the
// source provider installed, Terraform itself refuses to plan.
func TestMovedRefused(t *testing.T) {
	t.Parallel()
	r := movedtest.Load(t, movedtest.Helm2).With(t, "postrender", []any{map[string]any{"binary_path": "./kustomize.sh", "args": nil}})
	w := movedWorkspace(t, r, `
resource "landscaper_execution" "app" {
  name    = "moved-helm2"
  targets = { cluster = { name = "cluster" } }
  deploy_items = {
    release = {
      type   = "helm"
      target = "cluster"
      config = jsonencode({ name = "moved-helm2", namespace = "moved-helm2", chart = { ref = "registry.example.com/demo:0.1.0" } })
    }
  }
}
`)
	out, code := w.PlanExitCode()
	if code != 1 || !strings.Contains(out, "Cannot move helm_release: postrender") ||
		!strings.Contains(out, "helm_release.postrender cannot be carried over") {
		t.Fatalf("plan exited %d, want 1 naming postrender:\n%s", code, out)
	}
	if st := acctest.ReadFile(t, w.Path("terraform.tfstate")); !strings.Contains(st, `"type": "helm_release"`) {
		t.Fatalf("the state changed:\n%s", st)
	}

	w.Override(sourceAddress(r.Provider), "")
	if out, code := w.PlanExitCode(); code != 1 || !strings.Contains(out, "Missing required provider") {
		t.Fatalf("plan without the helm provider installed exited %d, want Terraform's Missing required provider:\n%s", code, out)
	}
}
