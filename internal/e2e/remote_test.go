package e2e

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
)

// remoteBlueprint writes a ConfigMap named after the greeting (a data
// import) holding the password (a secret import) into the namespace it
// imports, through the target it imports, and exports the greeting.
const remoteBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: greeting, type: data, schema: {type: string}}
  - {name: password, type: data, schema: {type: string}}
  - {name: namespace, type: data, schema: {type: string}}
exports:
  - {name: greeted, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    file: /deploy.yaml
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        greeted: {{ .values.deployitems.hello.greeting | quote }}
`

const remoteDeploy = `deployItems:
  - name: hello
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
            metadata: {name: {{ .imports.greeting | lower | replace " " "-" }}, namespace: {{ .imports.namespace }}}
            data: {greeting: {{ .imports.greeting | quote }}, password: {{ .imports.password | b64enc | quote }}}
      exports:
        exports:
          - key: greeting
            fromResource: {apiVersion: v1, kind: ConfigMap, name: {{ .imports.greeting | lower | replace " " "-" }}, namespace: {{ .imports.namespace }}}
            jsonPath: .data.greeting
`

// remoteConfig is a remote installation in namespace lsNS of Landscaper's
// cluster deploying into appNS; appConfig is the HCL of the provider
// target app's config.
func remoteConfig(lsNS, appNS, greeting, appConfig string, extra ...string) string {
	return fmt.Sprintf(`
provider "landscaper" {
  targets = {
    landscaper = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
    app        = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = %s }
  }
}

resource "landscaper_installation" "hello" {
  name               = "hello"
  landscaper_cluster = { target = "landscaper", namespace = %q }
  blueprint          = { path = "${path.module}/blueprint" }
  imports            = { greeting = %q, namespace = %q }
  sensitive_imports  = { password = "s3cret-remote-pw" }
  targets            = { cluster = { name = "app" } }
  timeouts           = { create = "4m", update = "4m", delete = "4m" }
%s
}
`, appConfig, lsNS, greeting, appNS, strings.Join(extra, "\n"))
}

const appConfig = `yamlencode({ kubeconfig = file("${path.module}/kubeconfig") })`

// TestRemoteManifestInstallation runs landscaper_installation on
// Landscaper's own controllers through the terraform CLI: applied, planned
// empty, updated, a rotated target credential that writes its Secret and
// runs nothing, drift of a written object repaired, a failing deploy item
// named with Landscaper's error, and destroyed with everything written.
func TestRemoteManifestInstallation(t *testing.T) {
	w, k, lsNS, appNS := remoteWorkspace(t, "remote-manifest")
	writeBlueprint(t, w, remoteDeploy)
	w.Config(remoteConfig(lsNS, appNS, "Hello World", appConfig))

	w.Apply()
	cm := k.Get(configMaps, appNS, "hello-world")
	if got := dig(cm.Object, "data", "password"); got != base64.StdEncoding.EncodeToString([]byte("s3cret-remote-pw")) {
		t.Errorf("the secret import reached the ConfigMap as %v", got)
	}
	inst := k.Get(lstest.GVRs["Installation"], lsNS, "hello")
	if phase := dig(inst.Object, "status", "phase"); phase != "Succeeded" {
		t.Fatalf("Installation phase %v", phase)
	}
	attrs := w.Attributes("landscaper_installation", "hello")
	if got := acctest.Dig(attrs, "status", "phase"); got != "Succeeded" {
		t.Errorf("status.phase %v", got)
	}
	if got := acctest.Dig(attrs, "status", "deploy_items", "hello"); got != "Succeeded" {
		t.Errorf("status.deploy_items: %v", acctest.Dig(attrs, "status", "deploy_items"))
	}
	if got := acctest.Dig(attrs, "sensitive_exports", "value", "greeted"); got != "Hello World" {
		t.Errorf("sensitive_exports %v, exports %v", attrs["sensitive_exports"], attrs["exports"])
	}
	objects, _ := attrs["landscaper_objects"].(map[string]any)
	for _, key := range []string{"Installation/hello", "Context/hello.context", "DataObject/hello.import.greeting",
		"Secret/hello.import.password", "Target/hello.target.cluster", "Secret/hello.target.cluster"} {
		if objects[key] == nil {
			t.Errorf("landscaper_objects has no %s: %v", key, objects)
		}
	}
	shown := fmt.Sprint(objects)
	for _, secret := range []string{"s3cret-remote-pw", base64.StdEncoding.EncodeToString([]byte(`"s3cret-remote-pw"`)), "client-key-data", "token"} {
		if strings.Contains(shown, secret) {
			t.Errorf("landscaper_objects shows %q", secret)
		}
	}
	if !strings.Contains(fmt.Sprint(objects["Target/hello.target.cluster"]), "secretRef") {
		t.Errorf("the Target keeps its config elsewhere than a Secret:\n%v", objects["Target/hello.target.cluster"])
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the apply: exit %d, want 0:\n%s", code, out)
	}
	jobID := acctest.Dig(attrs, "status", "job_id")

	// Another state naming the same installation in the same namespace is
	// refused before it writes anything: the Installation it would take
	// over is named, and stays this state's.
	owner := dig(inst.Object, "metadata", "annotations", "terraform-provider-landscaper/owner")
	other := newWorkspace(t)
	acctest.WriteFile(t, other.Path("kubeconfig"), k.Kubeconfig)
	writeBlueprint(t, other, remoteDeploy)
	other.Config(remoteConfig(lsNS, appNS, "Hello Other", appConfig))
	if out, code := other.Run(nil, "apply", "-input=false", "-no-color", "-auto-approve"); code == 0 ||
		!strings.Contains(strings.Join(strings.Fields(out), " "), "refused to overwrite or delete what this resource did not write: "+
			"Installation "+lsNS+"/hello (written by another Terraform resource") {
		t.Errorf("another state's apply of the installation: exit %d\n%s", code, out)
	}
	if got := dig(k.Get(lstest.GVRs["Installation"], lsNS, "hello").Object, "metadata", "annotations", "terraform-provider-landscaper/owner"); owner == nil || got != owner {
		t.Errorf("the Installation's owner went from %v to %v", owner, got)
	}
	if k.exists(configMaps, appNS, "hello-other") {
		t.Errorf("the refused state's installation ran")
	}

	// An update: Landscaper replaces the ConfigMap.
	w.Config(remoteConfig(lsNS, appNS, "Hello Again", appConfig))
	w.Apply()
	k.Get(configMaps, appNS, "hello-again")
	k.Poll(func() bool { return !k.exists(configMaps, appNS, "hello-world") }, func() string { return "hello-world still there" })
	attrs = w.Attributes("landscaper_installation", "hello")
	if acctest.Dig(attrs, "status", "job_id") == jobID {
		t.Errorf("the update ran no job")
	}
	jobID = acctest.Dig(attrs, "status", "job_id")
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the update: exit %d, want 0:\n%s", code, out)
	}

	// A rotated credential of the target: its Secret alone changes, and
	// Landscaper runs nothing.
	rotated := `yamlencode({ kubeconfig = yamlencode(yamldecode(file("${path.module}/kubeconfig"))) })`
	w.Config(remoteConfig(lsNS, appNS, "Hello Again", rotated))
	out, code := w.PlanExitCode()
	if code != 2 || !strings.Contains(out, `"Secret/hello.target.cluster"`) || strings.Count(out, "(known after apply)") != 1 ||
		strings.Contains(out, "job_id") {
		t.Fatalf("plan of a rotated credential: exit %d, want only the target's Secret changing:\n%s", code, out)
	}
	w.Apply()
	attrs = w.Attributes("landscaper_installation", "hello")
	if acctest.Dig(attrs, "status", "job_id") != jobID {
		t.Errorf("the rotated credential ran a job")
	}
	secret := k.Get(secretsOf, lsNS, "hello.target.cluster")
	cfg, _ := base64.StdEncoding.DecodeString(fmt.Sprint(dig(secret.Object, "data", "config")))
	if !strings.Contains(string(cfg), "kubeconfig") || strings.Contains(string(cfg), "kubeconfig: |") {
		t.Errorf("the target's Secret holds the old config:\n%s", cfg)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the rotation: exit %d, want 0:\n%s", code, out)
	}

	// A written object deleted behind Terraform's back: the refresh says
	// so, the apply writes it again, and the plan is empty after.
	k.Delete(lstest.GVRs["DataObject"], lsNS, "hello.import.greeting")
	out, code = w.PlanExitCode()
	if code != 2 || !strings.Contains(out, "DataObject/hello.import.greeting changed outside Terraform") {
		t.Fatalf("plan after a DataObject was deleted: exit %d:\n%s", code, out)
	}
	w.Apply()
	k.Get(lstest.GVRs["DataObject"], lsNS, "hello.import.greeting")
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the repair: exit %d, want 0:\n%s", code, out)
	}

	// Someone edits the Installation (another field manager) and maps the
	// greeting import, which server-side apply alone leaves in place and
	// Landscaper's next job would run with (second remote review, R2): the
	// refresh says so, the plan is an update, the apply takes the mapping
	// back before Landscaper's job, and the plan is empty after.
	foreign := `{"spec":{"importDataMappings":{"greeting":"Hello Mapped"}}}`
	if _, err := k.Resource(lstest.GVRs["Installation"], lsNS).Patch(t.Context(), "hello", types.MergePatchType, []byte(foreign),
		metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	out, code = w.PlanExitCode()
	if code != 2 || !strings.Contains(out, "Installation/hello changed outside Terraform") || !strings.Contains(out, "will be updated in-place") {
		t.Fatalf("plan after another manager mapped an import: exit %d, want an update:\n%s", code, out)
	}
	w.Apply()
	if got := dig(k.Get(lstest.GVRs["Installation"], lsNS, "hello").Object, "spec", "importDataMappings"); got != nil {
		t.Errorf("the apply left spec.importDataMappings = %v", got)
	}
	if k.exists(configMaps, appNS, "hello-mapped") || !k.exists(configMaps, appNS, "hello-again") {
		t.Errorf("Landscaper ran with the mapping another manager added")
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the mapping was taken back: exit %d, want 0:\n%s", code, out)
	}
	// A job Landscaper runs on its own (the reconcile operation set by
	// someone else, as its automatic reconcile and retries set it) leaves
	// only what is no drift.
	before := fmt.Sprint(dig(k.Get(lstest.GVRs["Installation"], lsNS, "hello").Object, "status", "jobIDFinished"))
	reconcile := `{"metadata":{"annotations":{"landscaper.gardener.cloud/operation":"reconcile"}}}`
	if _, err := k.Resource(lstest.GVRs["Installation"], lsNS).Patch(t.Context(), "hello", types.MergePatchType, []byte(reconcile),
		metav1.PatchOptions{FieldManager: "kubectl-annotate"}); err != nil {
		t.Fatal(err)
	}
	k.Poll(func() bool {
		return fmt.Sprint(dig(k.Get(lstest.GVRs["Installation"], lsNS, "hello").Object, "status", "jobIDFinished")) != before
	}, func() string { return "Landscaper ran no job for the reconcile operation" })
	k.WaitJobFinished(lsNS, "hello")
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after a job Landscaper ran on its own: exit %d, want 0:\n%s", code, out)
	}

	// A deploy item Landscaper's manifest deployer cannot apply: the
	// diagnostic names it with Landscaper's error code.
	writeBlueprint(t, w, strings.NewReplacer("kind: ConfigMap\n", "kind: NoSuchKind\n",
		"    target: {import: cluster}", "    target: {import: cluster}\n    timeout: 2s").Replace(remoteDeploy))
	out, code = w.Run(nil, "apply", "-input=false", "-no-color", "-auto-approve")
	if code == 0 || !strings.Contains(out, `Deploy item "hello" failed`) || !strings.Contains(out, "ERR_TIMEOUT") ||
		strings.Contains(out, "s3cret-remote-pw") {
		t.Fatalf("apply of a failing item: exit %d:\n%s", code, out)
	}
	if got := acctest.Dig(w.Attributes("landscaper_installation", "hello"), "status", "phase"); got != "Failed" {
		t.Errorf("status.phase after the failure: %v", got)
	}
	writeBlueprint(t, w, remoteDeploy)
	w.Apply()
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the failure was fixed: exit %d, want 0:\n%s", code, out)
	}

	// The Installation deleted outside Terraform: the resource stays with
	// the Secrets it wrote (the second remote review's R5: they were
	// forgotten, and no destroy deleted them), and the apply writes the
	// Installation again.
	if err := k.Resource(lstest.GVRs["Installation"], lsNS).Delete(t.Context(), "hello", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k.Poll(func() bool { return !k.exists(lstest.GVRs["Installation"], lsNS, "hello") }, func() string { return "Installation still there" })
	if out, code := w.PlanExitCode(); code != 2 || !strings.Contains(out, "Installation deleted outside Terraform") ||
		!strings.Contains(out, "will be updated in-place") {
		t.Fatalf("plan after the Installation was deleted: exit %d, want an update:\n%s", code, out)
	}
	w.Apply()
	k.Get(configMaps, appNS, "hello-again")
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the Installation was written again: exit %d, want 0:\n%s", code, out)
	}

	// Someone asks Landscaper to delete the Installation without
	// uninstalling: the destroy still uninstalls.
	keep := `{"metadata":{"annotations":{"landscaper.gardener.cloud/delete-without-uninstall":"true"}}}`
	if _, err := k.Resource(lstest.GVRs["Installation"], lsNS).Patch(t.Context(), "hello", types.MergePatchType, []byte(keep),
		metav1.PatchOptions{FieldManager: "kubectl-annotate"}); err != nil {
		t.Fatal(err)
	}
	if out, code := w.Run(nil, "destroy", "-input=false", "-no-color", "-auto-approve", "-refresh=false"); code != 0 {
		t.Fatalf("terraform destroy exited %d:\n%s", code, out)
	}
	if k.exists(configMaps, appNS, "hello-again") || k.exists(lstest.GVRs["Installation"], lsNS, "hello") {
		t.Errorf("destroy left the ConfigMap or the Installation")
	}
	for _, kind := range []string{"DataObject", "Target", "Context"} {
		// Landscaper's central controller keeps a Context "default" in
		// every namespace.
		if left := slices.DeleteFunc(k.list(lstest.GVRs[kind], lsNS), func(n string) bool { return kind == "Context" && n == "default" }); len(left) > 0 {
			t.Errorf("destroy left %s objects %v", kind, left)
		}
	}
	if left := k.list(secretsOf, lsNS); len(left) > 0 {
		t.Errorf("destroy left Secrets %v", left)
	}
}

// remoteWorkspace is a workspace with the kubeconfig of Landscaper's
// cluster, and two namespaces there: <name>-ls for Landscaper's objects,
// <name>-app for what the deploy items install.
func remoteWorkspace(t *testing.T, name string) (w *acctest.Workspace, k *diffKube, lsNS, appNS string) {
	t.Helper()
	w = newWorkspace(t) // first: it skips the test without TF_ACC, before Landscaper starts
	env, _ := realLandscaper.Get(t)
	k = newDiffKube(t, env)
	lsNS, appNS = name+"-ls", name+"-app"
	for _, ns := range []string{lsNS, appNS} {
		k.Namespace(ns)
	}
	acctest.WriteFile(t, w.Path("kubeconfig"), k.Kubeconfig)
	return w, k, lsNS, appNS
}

// writeBlueprint writes the blueprint directory of the workspace:
// remoteBlueprint with the deploy execution deploy.
func writeBlueprint(t *testing.T, w *acctest.Workspace, deploy string) {
	t.Helper()
	if err := os.MkdirAll(w.Path("blueprint"), 0o755); err != nil {
		t.Fatal(err)
	}
	acctest.WriteFile(t, filepath.Join(w.Path("blueprint"), "blueprint.yaml"), remoteBlueprint)
	acctest.WriteFile(t, filepath.Join(w.Path("blueprint"), "deploy.yaml"), deploy)
}

var (
	configMaps = lstest.GVRs["ConfigMap"]
	secretsOf  = lstest.GVRs["Secret"]
)

// dig reads a nested field of an object, nil where it is missing.
func dig(obj map[string]any, path ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, path...)
	return v
}

func (k *diffKube) exists(gvr schema.GroupVersionResource, ns, name string) bool {
	k.t.Helper()
	_, err := k.Resource(gvr, ns).Get(k.t.Context(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		k.t.Fatalf("get %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return err == nil
}

// list names the objects of a kind in ns.
func (k *diffKube) list(gvr schema.GroupVersionResource, ns string) []string {
	k.t.Helper()
	l, err := k.Resource(gvr, ns).List(k.t.Context(), metav1.ListOptions{})
	if err != nil {
		k.t.Fatalf("list %s in %s: %v", gvr.Resource, ns, err)
	}
	var out []string
	for _, u := range l.Items {
		out = append(out, u.GetName())
	}
	return out
}

// TestRemoteRefusesWhatLandscaperCannotRead: a component from local
// constructors or a local transport archive, and the attributes Landscaper
// has no counterpart for, are plan-time errors on their paths that say
// why; nothing is contacted.
func TestRemoteRefusesWhatLandscaperCannotRead(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.Config(fmt.Sprintf(`
provider "landscaper" {
  targets = {
    landscaper = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = %q }) }
  }
}

resource "landscaper_installation" "constructed" {
  name               = "constructed"
  landscaper_cluster = { target = "landscaper", namespace = "ls" }
  blueprint          = { ref = "blueprint" }
  component          = { name = "example.com/app", version = "1.0.0", constructors = ["component-constructor.yaml"] }
}

resource "landscaper_installation" "archived" {
  name               = "archived"
  landscaper_cluster = { target = "landscaper", namespace = "ls" }
  blueprint          = { ref = "blueprint" }
  component          = { name = "example.com/app", version = "1.0.0", repository = "transport.tar" }
  rollout            = { batches = ["100%%"] }
}

resource "landscaper_installation" "inprocess" {
  name                = "inprocess"
  blueprint           = { filesystem = { "blueprint.yaml" = "kind: Blueprint" } }
  automatic_reconcile = { interval = "soon" }
}
`, acctest.UnreachableKubeconfig))
	out, code := w.Run(nil, "plan", "-input=false", "-no-color")
	if code != 1 {
		t.Fatalf("plan exited %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{"component constructors are files on this machine, which Landscaper cannot read",
		"a local transport archive or component archive is a file on this machine", "with landscaper_installation.constructed",
		"with landscaper_installation.archived", "rollout cannot be used with landscaper_cluster",
		`"soon" is not a positive duration`, "automatic_reconcile needs landscaper_cluster: in-process, nothing runs between applies"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
}

// TestRemoteAutomaticReconcileRepairsDrift: with automatic_reconcile,
// Landscaper repairs drift in the target cluster between two applies on
// its own, and the plan after is empty.
func TestRemoteAutomaticReconcileRepairsDrift(t *testing.T) {
	w, k, lsNS, appNS := remoteWorkspace(t, "remote-auto")
	writeBlueprint(t, w, remoteDeploy)
	w.Config(remoteConfig(lsNS, appNS, "Hello World", appConfig, `  automatic_reconcile = { interval = "10s" }`))
	w.Apply()
	inst := k.Get(lstest.GVRs["Installation"], lsNS, "hello")
	if got := dig(inst.Object, "spec", "automaticReconcile", "succeededReconcile", "interval"); got != "10s" {
		t.Fatalf("spec.automaticReconcile: %v", dig(inst.Object, "spec", "automaticReconcile"))
	}
	before := k.Get(configMaps, appNS, "hello-world").GetUID()

	// Someone deletes what the deploy item installed; no apply runs.
	k.Delete(configMaps, appNS, "hello-world")
	k.Poll(func() bool { return k.exists(configMaps, appNS, "hello-world") },
		func() string { return "Landscaper did not repair the deleted ConfigMap" })
	if k.Get(configMaps, appNS, "hello-world").GetUID() == before {
		t.Fatal("the ConfigMap was not deleted")
	}
	k.WaitJobFinished(lsNS, "hello")
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after Landscaper repaired the drift: exit %d, want 0:\n%s", code, out)
	}
	if out, code := w.Run(nil, "destroy", "-input=false", "-no-color", "-auto-approve"); code != 0 {
		t.Fatalf("terraform destroy exited %d:\n%s", code, out)
	}
}

// TestRemoteTree runs a tree on Landscaper's controllers: a static and a
// templated sub-installation with data flowing between them, target lists
// and maps of provider targets passed down, and exports collected by the
// root; applied, planned empty, updated and destroyed.
func TestRemoteTree(t *testing.T) {
	w, k, lsNS, appNS := remoteWorkspace(t, "remote-tree")
	for p, content := range map[string]string{"blueprint.yaml": subinstBlueprint(), "consumer/blueprint.yaml": consumerBlueprint} {
		full := filepath.Join(w.Path("blueprint"), filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		acctest.WriteFile(t, full, content)
	}
	config := func(prefix string) string {
		return fmt.Sprintf(`
provider "landscaper" {
  targets = {
    landscaper = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
    app        = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
  }
}

resource "landscaper_installation" "tree" {
  name               = "tree"
  landscaper_cluster = { target = "landscaper", namespace = %q }
  blueprint          = { path = "${path.module}/blueprint" }
  imports            = { prefix = %q, namespace = %q }
  targets            = { cluster = { name = "app" } }
  target_lists       = { fleet = [{ name = "app" }, { name = "app" }] }
  target_maps        = { regions = { eu = { name = "app" }, us = { name = "app" } } }
  timeouts           = { create = "4m", update = "4m", delete = "4m" }
}
`, lsNS, prefix, appNS)
	}
	w.Config(config("hello"))
	w.Apply()
	attrs := w.Attributes("landscaper_installation", "tree")
	if got := acctest.Dig(attrs, "exports", "value", "final", "greeting"); got != "hello, world" {
		t.Errorf("exports: %v", attrs["exports"])
	}
	for _, path := range []string{"", "producer", "consumer"} {
		if got := acctest.Dig(attrs, "status", "installations", path, "phase"); got != "Succeeded" {
			t.Errorf("status.installations[%q].phase %v", path, got)
		}
	}
	for _, key := range []string{"producer/config", "producer/greeter", "consumer/second", "consumer/fleet-1", "consumer/region-us"} {
		if got := acctest.Dig(attrs, "status", "deploy_items", key); got != "Succeeded" {
			t.Errorf("status.deploy_items[%q] %v; all: %v", key, got, acctest.Dig(attrs, "status", "deploy_items"))
		}
		if acctest.Dig(attrs, "deploy_items", key) == nil {
			t.Errorf("deploy_items has no %q", key)
		}
	}
	objects, _ := attrs["landscaper_objects"].(map[string]any)
	for _, key := range []string{"Target/tree.target.fleet.1", "Secret/tree.target.regions.eu", "DataObject/tree.import.prefix"} {
		if objects[key] == nil {
			t.Errorf("landscaper_objects has no %s", key)
		}
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the apply: exit %d, want 0:\n%s", code, out)
	}

	w.Config(config("howdy"))
	w.Apply()
	if got := acctest.Dig(w.Attributes("landscaper_installation", "tree"), "exports", "value", "final", "greeting"); got != "howdy, world" {
		t.Errorf("exports after the update: %v", got)
	}
	if got := dig(k.Get(configMaps, appNS, "producer").Object, "data", "prefix"); got != "howdy" {
		t.Errorf("the producer's ConfigMap holds %v", got)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the update: exit %d, want 0:\n%s", code, out)
	}

	if out, code := w.Run(nil, "destroy", "-input=false", "-no-color", "-auto-approve"); code != 0 {
		t.Fatalf("terraform destroy exited %d:\n%s", code, out)
	}
	if left := k.list(configMaps, appNS); slices.ContainsFunc(left, func(n string) bool { return n == "producer" || strings.HasPrefix(n, "fleet") }) {
		t.Errorf("destroy left ConfigMaps %v", left)
	}
}
