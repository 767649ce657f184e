package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/privatestate"
)

// modesBlueprint deploys a ConfigMap with the manifest deployer and the
// demo chart, inline, with the helm deployer, and exports the greeting the
// ConfigMap holds.
const modesBlueprint = blueprintHeader + `  - {name: greeting, type: data, schema: {type: string}}
  - {name: chart, type: data, schema: {type: string}}
exports:
  - {name: greeting, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: config
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
                  metadata: {name: greeting, namespace: {{ .imports.namespace }}}
                  data: {greeting: {{ .imports.greeting | quote }}}
            exports:
              exports:
                - key: greeting
                  jsonPath: .data.greeting
                  fromResource: {apiVersion: v1, kind: ConfigMap, name: greeting, namespace: {{ .imports.namespace }}}
        - name: release
          type: landscaper.gardener.cloud/helm
          target: {import: cluster}
          config:
            apiVersion: helm.deployer.landscaper.gardener.cloud/v1alpha1
            kind: ProviderConfiguration
            name: demo
            namespace: {{ .imports.namespace }}
            chart:
              archive: {raw: {{ .imports.chart }}}
            values:
              message: {{ .imports.greeting | quote }}
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        greeting: {{ .values.deployitems.config.greeting | quote }}
`

// fallbackManifest is a manifest of policy fallback for the config item:
// Landscaper's manifest deployer and the provider's each manage such an
// object only while their own label marks it.
const fallbackManifest = `            manifests:
              - policy: fallback
                manifest:
                  apiVersion: v1
                  kind: ConfigMap
                  metadata: {name: fallback, namespace: {{ .imports.namespace }}}
                  data: {greeting: {{ .imports.greeting | quote }}}
`

// modesConfig is the installation in-process, or, with lsNS, on
// Landscaper's cluster in that namespace.
func modesConfig(lsNS, appNS, greeting, chart string) string {
	cluster := ""
	if lsNS != "" {
		cluster = fmt.Sprintf("  landscaper_cluster = { target = \"landscaper\", namespace = %q }\n", lsNS)
	}
	return fmt.Sprintf(`
provider "landscaper" {
  targets = {
    landscaper = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
    app        = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
  }
}

resource "landscaper_installation" "moving" {
  name      = "moving"
%s  blueprint = { path = "${path.module}/blueprint" }
  imports   = { greeting = %q, namespace = %q, chart = %q }
  targets   = { cluster = { name = "app" } }
  timeouts  = { create = "4m", update = "4m", delete = "4m" }
}
`, cluster, greeting, appNS, chart)
}

// TestMoveBetweenModes moves an installation of a manifest item and a helm
// item from in-process to Landscaper's own controllers and back through
// the terraform CLI: each move is an update that hands the deployed
// objects over in place (UIDs unchanged, the helm release one revision
// up), the plan after each is empty, and a move with changed imports is
// refused at plan time. Destroying it at the end removes everything.
func TestMoveBetweenModes(t *testing.T) {
	w, k, lsNS, appNS := remoteWorkspace(t, "modes")
	if err := os.MkdirAll(w.Path("blueprint"), 0o755); err != nil {
		t.Fatal(err)
	}
	acctest.WriteFile(t, filepath.Join(w.Path("blueprint"), "blueprint.yaml"), modesBlueprint)
	chart := helmtest.ArchiveBase64(t, helmtest.Demo, "")
	inProcess, remote := modesConfig("", appNS, "hello", chart), modesConfig(lsNS, appNS, "hello", chart)
	planEmpty := func(when string) {
		t.Helper()
		if out, code := w.PlanExitCode(); code != 0 {
			t.Fatalf("plan %s: exit %d, want 0:\n%s", when, code, out)
		}
	}
	exported := func(when string) {
		t.Helper()
		if got := acctest.Dig(w.Attributes("landscaper_installation", "moving"), "exports", "value", "greeting"); got != "hello" {
			t.Errorf("exports %s: greeting %v", when, got)
		}
	}
	refused := func(config string, want ...string) {
		t.Helper()
		w.Config(config)
		out, code := w.Run(nil, "plan", "-input=false", "-no-color")
		flat := strings.Join(strings.Fields(out), " ")
		for _, s := range want {
			if code != 1 || !strings.Contains(flat, s) {
				t.Fatalf("plan exited %d without %q:\n%s", code, s, out)
			}
		}
	}

	w.Config(inProcess)
	w.Apply()
	uids := k.uids(appNS)
	if len(uids) < 4 {
		t.Fatalf("the in-process apply deployed %v", slices.Sorted(maps.Keys(uids)))
	}
	checkReleases(t, k, appNS, []string{"demo"}, 1)
	exported("in-process")

	// In-process to remote: moving while the imports change is refused.
	refused(modesConfig(lsNS, appNS, "changed", chart), "Cannot move to the Landscaper cluster",
		"differ from those the last in-process apply ran with", "with landscaper_installation.moving")
	w.Config(remote)
	out, code := w.PlanExitCode()
	if code != 2 || !strings.Contains(out, "Moving to the Landscaper cluster") || !strings.Contains(out, "update in-place") ||
		strings.Contains(out, "must be replaced") || !strings.Contains(strings.Join(strings.Fields(out), " "), `"config", "release"`) {
		t.Fatalf("plan of the move to Landscaper: exit %d, want an update saying what is handed over:\n%s", code, out)
	}
	w.Apply()
	k.expectUIDs(appNS, uids, "after the move to Landscaper")
	checkReleases(t, k, appNS, []string{"demo"}, 2)
	if phase := phaseOf(k, lsNS, "moving"); phase != "Succeeded" {
		t.Fatalf("the Installation is %v", phase)
	}
	items := k.deployItemNames(lsNS)
	k.expectManagedBy(appNS, func(label, value string) string {
		if items[value] {
			return ""
		}
		return fmt.Sprintf("Landscaper's label %s=<one of its DeployItems %v>", label, slices.Sorted(maps.Keys(items)))
	})
	attrs := w.Attributes("landscaper_installation", "moving")
	if got := acctest.Dig(attrs, "status", "phase"); got != "Succeeded" {
		t.Errorf("status.phase after the move %v", got)
	}
	written, _ := attrs["landscaper_objects"].(map[string]any)
	if written["Installation/moving"] == nil {
		t.Fatalf("landscaper_objects after the move: %v", written)
	}
	exported("on Landscaper")
	planEmpty("after the move to Landscaper")
	// The state records the namespace's UID with the URL: another cluster
	// answering at that URL is told by it (the third remote review's RR3-6).
	doc, err := privatestate.Decode(w.Private("landscaper_installation", "moving"))
	if err != nil {
		t.Fatal(err)
	}
	var stored struct {
		Remote struct {
			NamespaceUID string `json:"namespace_uid"`
		} `json:"remote"`
	}
	if err := json.Unmarshal(doc.JSON, &stored); err != nil {
		t.Fatal(err)
	}
	nsObj, err := k.Resource(lstest.GVRs["Namespace"], "").Get(t.Context(), lsNS, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := stored.Remote.NamespaceUID; got == "" || got != string(nsObj.GetUID()) {
		t.Errorf("the state records namespace UID %q, the namespace %s is %s", got, lsNS, nsObj.GetUID())
	}

	// On Landscaper, the config item gains an object of policy fallback,
	// created by Landscaper's deployer and marked by its label: the move
	// back must adopt it, or the provider would neither manage nor delete
	// it.
	acctest.WriteFile(t, filepath.Join(w.Path("blueprint"), "blueprint.yaml"),
		strings.Replace(modesBlueprint, "            manifests:\n", fallbackManifest, 1))
	w.Apply()
	uids = k.uids(appNS)
	if _, ok := uids["configmaps/fallback"]; !ok {
		t.Fatalf("Landscaper did not deploy the fallback ConfigMap: %v", slices.Sorted(maps.Keys(uids)))
	}
	planEmpty("after the update on Landscaper")

	// Someone maps an import on the Installation (another field manager):
	// what Landscaper deployed may then not be what the configuration
	// says, so the move back is refused until an apply on Landscaper has
	// taken the mapping back (second remote review, R2).
	mapped := `{"spec":{"importDataMappings":{"greeting":"mapped"}}}`
	if _, err := k.Resource(lstest.GVRs["Installation"], lsNS).Patch(t.Context(), "moving", types.MergePatchType, []byte(mapped),
		metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	refused(inProcess, "Cannot move back in-process", "changed outside Terraform (Installation/moving)")
	w.Config(remote)
	w.Apply()
	if got := dig(k.Get(lstest.GVRs["Installation"], lsNS, "moving").Object, "spec", "importDataMappings"); got != nil {
		t.Fatalf("the apply left spec.importDataMappings = %v", got)
	}
	planEmpty("after the mapping was taken back")
	k.expectUIDs(appNS, uids, "after the mapping was taken back")
	revision := len(releaseHistory(t, k, appNS, "demo"))

	// Remote to in-process: moving back while the imports change is
	// refused.
	refused(modesConfig("", appNS, "changed", chart), "Cannot move back in-process",
		"differ from those of the last apply on the Landscaper cluster")
	// What the plan cannot check is checked at apply, before Landscaper
	// lets go (the third remote review's RR3-4): imports from a resource
	// created in the same apply (Terraform plans the resource again once
	// they are known, and the apply checks them too), and objects changed
	// on the Landscaper cluster since the last refresh (none is read with
	// -refresh=false: only the apply's own reading refuses this one).
	refusedAtApply := func(config string, args []string, want ...string) {
		t.Helper()
		w.Config(config)
		out, code := w.Run(nil, append([]string{"apply", "-input=false", "-no-color", "-auto-approve"}, args...)...)
		flat := strings.Join(strings.Fields(out), " ")
		for _, s := range want {
			if code != 1 || !strings.Contains(flat, s) {
				t.Fatalf("apply exited %d without %q:\n%s", code, s, out)
			}
		}
		if !k.exists(lstest.GVRs["Installation"], lsNS, "moving") {
			t.Fatalf("a refused move back released the Installation:\n%s", out)
		}
		k.expectUIDs(appNS, uids, "after a refused move back")
	}
	refusedAtApply(modesConfig("", appNS, "${terraform_data.greeting.output}", chart)+
		"resource \"terraform_data\" \"greeting\" {\n  input = \"changed\"\n}\n", nil,
		"Cannot move back in-process", "differ from those of the last apply on the Landscaper cluster")
	dataObjects := lstest.GVRs["DataObject"]
	imported := lscluster.ObjectName("moving", "import", "greeting")
	if !k.exists(dataObjects, lsNS, imported) {
		t.Fatalf("no DataObject %s in %v", imported, k.list(dataObjects, lsNS))
	}
	patchData := func(data string) {
		t.Helper()
		if _, err := k.Resource(dataObjects, lsNS).Patch(t.Context(), imported, types.MergePatchType,
			[]byte(`{"data":`+data+`}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patchData(`"edited"`)
	refusedAtApply(inProcess, []string{"-refresh=false"}, "Cannot move back in-process", "changed outside Terraform")
	patchData(`"hello"`)
	w.Config(inProcess)
	out, code = w.PlanExitCode()
	if code != 2 || !strings.Contains(out, "Moving back in-process") || !strings.Contains(out, "update in-place") ||
		strings.Contains(out, "must be replaced") {
		t.Fatalf("plan of the move back: exit %d, want an update saying what is handed over:\n%s", code, out)
	}
	w.Apply()
	k.expectUIDs(appNS, uids, "after the move back in-process")
	checkReleases(t, k, appNS, []string{"demo"}, revision+1)
	if k.exists(lstest.GVRs["Installation"], lsNS, "moving") {
		t.Errorf("the Installation is still on Landscaper's cluster")
	}
	for key := range written {
		kind, name, _ := strings.Cut(key, "/")
		if k.exists(lstest.GVRs[kind], lsNS, name) {
			t.Errorf("%s is still on Landscaper's cluster", key)
		}
	}
	owners := providerOwners(w, "moving")
	k.expectManagedBy(appNS, func(label, value string) string {
		if owners[value] {
			return ""
		}
		return fmt.Sprintf("the provider's, one of %v", slices.Sorted(maps.Keys(owners)))
	})
	attrs = w.Attributes("landscaper_installation", "moving")
	if attrs["landscaper_objects"] != nil {
		t.Errorf("landscaper_objects in-process: %v", attrs["landscaper_objects"])
	}
	exported("back in-process")
	planEmpty("after the move back")

	if out, code := w.Run(nil, "destroy", "-input=false", "-no-color", "-auto-approve"); code != 0 {
		t.Fatalf("terraform destroy exited %d:\n%s", code, out)
	}
	if left := k.uids(appNS); len(left) > 0 {
		t.Errorf("destroy left %v", slices.Sorted(maps.Keys(left)))
	}
	checkReleases(t, k, appNS, []string{"demo"}, 0)
}

// releaseHistory is "<revision>:<status>" of each record of the release.
func releaseHistory(t *testing.T, k *diffKube, ns, name string) []string {
	t.Helper()
	rc, err := clientcmd.RESTConfigFromKubeConfig([]byte(k.Kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return helmtest.History(t, cs, ns, name)
}
