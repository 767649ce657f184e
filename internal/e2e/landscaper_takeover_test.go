package e2e

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lsreferee"
)

// takeoverCase is an installation Landscaper's own controllers deploy,
// which the provider then takes over through the terraform CLI as the
// migration guide says, and which the guide's rollback hands back to
// Landscaper. Its Installation, Targets, DataObjects and what it deploys
// share one namespace, the case's name.
type takeoverCase struct {
	diffCase
	// releases are the helm releases the tree installs (in the namespace):
	// each must be upgraded in place by the take-over and by the rollback.
	releases []string
}

// takeoverObjects are the kinds whose objects in the namespace must keep
// their UIDs through the take-over and the rollback: all the tree deploys,
// helm's release records and the import Secrets.
var takeoverObjects = []string{"configmaps", "secrets"}

// takeOver runs c: Landscaper deploys it; the import reads it (plan
// -generate-config-out -out); the Installation is deleted with
// delete-without-uninstall; the saved plan is applied; the plan after is
// empty; then Landscaper takes it back from a copy of the Installation.
// Every object keeps its UID throughout, and every helm release goes up by
// one revision at each hand-over.
func takeOver(t *testing.T, c takeoverCase) {
	t.Helper()
	w := newWorkspace(t)
	env, _ := realLandscaper.Get(t)
	k := newDiffKube(t, env)
	ns := c.name
	k.Namespace(ns)

	start := time.Now()
	step := func(what string) { t.Logf("%s after %s", what, time.Since(start).Round(100*time.Millisecond)) }
	ls := &diffRun{who: "Landscaper", ns: ns}
	runLandscaper(t, k, c.diffCase, ns, ls)
	if ls.results["phase"] != "Succeeded" {
		t.Fatalf("Landscaper's installation is %v: %s", ls.results["phase"], lsreferee.Compact(ls.results))
	}
	step("Landscaper deployed the installation")
	expectLstestFollows(t, k, ns)
	uids := k.uids(ns)
	checkReleases(t, k, ns, c.releases, 1)
	// Step 2 of the guide: a copy of the Installation to roll back with.
	saved := k.Get(lstest.GVRs["Installation"], ns, c.name)
	if os.Getenv("TAKEOVER_DUMP") != "" {
		k.dump(ns)
	}

	// Steps 1, 4, 5: the provider's targets named as the Targets, an import
	// block, the generated configuration, a saved plan.
	acctest.WriteFile(t, w.Path("kubeconfig"), k.Kubeconfig)
	w.Config(takeoverConfig(c.diffCase, ns+"/"+c.name))
	var env2 []string
	out, code := w.Run(nil, "plan", "-input=false", "-no-color", "-generate-config-out=generated.tf")
	switch {
	case len(c.secrets) > 0:
		// The generated configuration holds sensitive_imports = null; the
		// import's warning says what to write instead.
		if code == 0 || !strings.Contains(out, "sensitive_imports") {
			t.Fatalf("plan with imports from Secrets exited %d without naming sensitive_imports:\n%s", code, out)
		}
		var entries, vars []string
		for _, n := range slices.Sorted(maps.Keys(c.secrets)) {
			v := strings.ReplaceAll(c.name+"_"+n, "-", "_")
			entries = append(entries, fmt.Sprintf("%q = var.%s", n, v))
			vars = append(vars, fmt.Sprintf("variable %q {\n  sensitive = true\n}\n", v))
			env2 = append(env2, "TF_VAR_"+v+"="+c.secrets[n])
		}
		generated := acctest.ReadFile(t, w.Path("generated.tf"))
		nullSecrets := regexp.MustCompile(`sensitive_imports +=  *null`)
		if !nullSecrets.MatchString(generated) {
			t.Fatalf("generated configuration without sensitive_imports = null:\n%s", generated)
		}
		generated = nullSecrets.ReplaceAllLiteralString(generated, "sensitive_imports = { "+strings.Join(entries, ", ")+" }")
		acctest.WriteFile(t, w.Path("generated.tf"), generated+strings.Join(vars, ""))
	case code != 0:
		t.Fatalf("plan -generate-config-out exited %d:\n%s", code, out)
	}
	// A plan saved by the run that generates the configuration cannot be
	// applied (Terraform: "Resource node has no configuration attached"):
	// the plan to apply is made with the generated configuration in place.
	if out, code := w.Run(env2, "plan", "-input=false", "-no-color", "-out=tfplan"); code != 0 {
		t.Fatalf("plan of the take-over exited %d:\n%s", code, out)
	}

	// Step 3: Landscaper lets go of the installation, leaving what it
	// deployed in place.
	lsItems := k.deployItemNames(ns)
	k.annotate(ns, c.name, "landscaper.gardener.cloud/delete-without-uninstall", "true")
	k.Delete(lstest.GVRs["Installation"], ns, c.name)
	k.WaitGone(lstest.GVRs["Installation"], ns, c.name)
	step("Landscaper deleted the Installation")
	k.waitLetGo(ns)
	step("Landscaper let go")
	k.expectUIDs(ns, uids, "after Landscaper let go")

	// Step 6: the saved plan takes over in place.
	if out, code := w.Run(env2, "apply", "-input=false", "-no-color", "tfplan"); code != 0 {
		t.Fatalf("apply of the take-over exited %d:\n%s", code, out)
	}
	step("the take-over applied")
	k.expectUIDs(ns, uids, "after the take-over")
	checkReleases(t, k, ns, c.releases, 2)
	owners := providerOwners(w, c.name)
	k.expectManagedBy(ns, func(label, value string) string {
		if owners[value] && !lsItems[value] {
			return ""
		}
		return fmt.Sprintf("the provider's, one of %v", slices.Sorted(maps.Keys(owners)))
	})
	if out, code := w.Run(env2, "plan", "-input=false", "-no-color", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan after the take-over exited %d:\n%s", code, out)
	}

	// Rolling back: Terraform forgets the installation, Landscaper gets it
	// back from the copy and reconciles it without re-creating anything.
	if out, code := w.Run(nil, "state", "rm", "landscaper_installation."+resourceName(c.name)); code != 0 {
		t.Fatalf("terraform state rm exited %d:\n%s", code, out)
	}
	k.Create(rollbackCopy(saved))
	k.annotate(ns, c.name, "landscaper.gardener.cloud/operation", "reconcile")
	k.WaitJobFinished(ns, c.name)
	step("Landscaper took the installation back")
	if phase := phaseOf(k, ns, c.name); phase != "Succeeded" {
		t.Fatalf("Landscaper took the installation back %s", phase)
	}
	k.expectUIDs(ns, uids, "after Landscaper took the installation back")
	checkReleases(t, k, ns, c.releases, 3)
	items := k.deployItemNames(ns)
	k.expectManagedBy(ns, func(label, value string) string {
		if items[value] {
			return ""
		}
		return fmt.Sprintf("Landscaper's label %s=<one of its DeployItems %v>", label, slices.Sorted(maps.Keys(items)))
	})
}

// takeoverConfig is the configuration of the guide's steps 1 and 4 for
// the installation id (<namespace>/<name>): the provider target
// landscaper, one per Target the installation imports (named as
// runLandscaper names them), all the test cluster, and an import block.
func takeoverConfig(c diffCase, id string) string {
	names := slices.Clone(c.targets)
	for name, n := range c.targetLists {
		for i := range n {
			names = append(names, fmt.Sprintf("%s-%d", name, i))
		}
	}
	for name, keys := range c.targetMaps {
		for _, key := range keys {
			names = append(names, name+"-"+key)
		}
	}
	var b strings.Builder
	b.WriteString("provider \"landscaper\" {\n  targets = {\n")
	for _, n := range append([]string{"landscaper"}, slices.Sorted(slices.Values(names))...) {
		fmt.Fprintf(&b, "    %q = { type = \"landscaper.gardener.cloud/kubernetes-cluster\", config = yamlencode({ kubeconfig = file(\"${path.module}/kubeconfig\") }) }\n", n)
	}
	fmt.Fprintf(&b, "  }\n}\n\nimport {\n  to = landscaper_installation.%s\n  id = \"landscaper/%s\"\n}\n", resourceName(c.name), id)
	return b.String()
}

func resourceName(name string) string { return strings.ReplaceAll(name, "-", "_") }

// providerOwners are the values of the managed labels the provider's
// items of the installation name put on their objects, from the state's
// deploy items ("<item>" or "<sub-installation path>/<item>").
func providerOwners(w *acctest.Workspace, name string) map[string]bool {
	items, _ := acctest.Dig(w.Attributes("landscaper_installation", resourceName(name)), "status", "deploy_items").(map[string]any)
	out := map[string]bool{}
	for key := range items {
		exec, item := name, key
		if i := strings.LastIndex(key, "/"); i >= 0 {
			exec, item = name+"/"+key[:i], key[i+1:]
		}
		out[kube.OwnerFor(exec, item)] = true
	}
	return out
}

// rollbackCopy is the Installation saved before the take-over as the
// guide's rollback re-creates it: without status and what the API server
// set.
func rollbackCopy(saved *unstructured.Unstructured) *unstructured.Unstructured {
	u := saved.DeepCopy()
	delete(u.Object, "status")
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "finalizers"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	return u
}

// uids are the UIDs of the objects of takeoverObjects in ns, by
// "<resource>/<name>".
func (k *diffKube) uids(ns string) map[string]types.UID {
	k.t.Helper()
	out := map[string]types.UID{}
	for _, res := range takeoverObjects {
		list, err := k.Resource(schema.GroupVersionResource{Version: "v1", Resource: res}, ns).List(k.t.Context(), metav1.ListOptions{})
		if err != nil {
			k.t.Fatal(err)
		}
		for _, item := range list.Items {
			if !skipped[res+"/"+item.GetName()] && !ownedByLandscaper(&item) {
				out[res+"/"+item.GetName()] = item.GetUID()
			}
		}
	}
	return out
}

// ownedByLandscaper tells Landscaper's bookkeeping (a DeployItem's export
// Secret, a DataObject or Target of an installation's context), which
// Kubernetes' garbage collector deletes with its owner.
func ownedByLandscaper(u *unstructured.Unstructured) bool {
	for _, o := range u.GetOwnerReferences() {
		if strings.HasPrefix(o.APIVersion, "landscaper.gardener.cloud/") {
			return true
		}
	}
	return false
}

// waitLetGo waits until Landscaper has let go of everything in ns: no
// Installation, Execution or DeployItem is left, nor any object of
// Landscaper's bookkeeping that the garbage collector deletes with them
// (a new Installation cannot take over its context's DataObjects while
// they are owned by one that is gone).
func (k *diffKube) waitLetGo(ns string) {
	k.t.Helper()
	var left []string
	k.Poll(func() bool {
		left = nil
		for _, kind := range []string{"Installation", "Execution", "DeployItem", "DataObject", "Target", "Secret"} {
			list, err := k.Resource(lstest.GVRs[kind], ns).List(k.t.Context(), metav1.ListOptions{})
			if err != nil {
				k.t.Fatal(err)
			}
			for _, item := range list.Items {
				switch kind {
				case "DataObject", "Target", "Secret":
					if !ownedByLandscaper(&item) {
						continue
					}
				}
				left = append(left, kind+" "+item.GetName())
			}
		}
		return len(left) == 0
	}, func() string { return fmt.Sprintf("Landscaper's objects in %s are still there: %v", ns, left) })
}

// expectUIDs fails the test unless every object of want is still there
// with its UID.
func (k *diffKube) expectUIDs(ns string, want map[string]types.UID, when string) {
	k.t.Helper()
	got := k.uids(ns)
	for _, key := range slices.Sorted(maps.Keys(want)) {
		switch uid, ok := got[key]; {
		case !ok:
			k.t.Errorf("%s: %s/%s is gone", when, ns, key)
		case uid != want[key]:
			k.t.Errorf("%s: %s/%s was re-created: UID %s, was %s", when, ns, key, uid, want[key])
		}
	}
}

// expectManagedBy fails the test for each object in ns carrying a
// deployer's managed label whose value bad rejects, saying what it wants.
func (k *diffKube) expectManagedBy(ns string, bad func(label, value string) string) {
	k.t.Helper()
	for _, res := range takeoverObjects {
		list, err := k.Resource(schema.GroupVersionResource{Version: "v1", Resource: res}, ns).List(k.t.Context(), metav1.ListOptions{})
		if err != nil {
			k.t.Fatal(err)
		}
		for _, item := range list.Items {
			for _, label := range []string{kube.ManifestManagedLabel, lscluster.HelmManagedLabel} {
				if v, ok := item.GetLabels()[label]; ok {
					if want := bad(label, v); want != "" {
						k.t.Errorf("%s %s/%s is labelled %s=%s, want %s", res, ns, item.GetName(), label, v, want)
					}
				}
			}
		}
	}
}

// deployItemNames are the names of the DeployItems in ns.
func (k *diffKube) deployItemNames(ns string) map[string]bool {
	k.t.Helper()
	list, err := k.Resource(lstest.GVRs["DeployItem"], ns).List(k.t.Context(), metav1.ListOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	out := map[string]bool{}
	for _, item := range list.Items {
		out[item.GetName()] = true
	}
	return out
}

func (k *diffKube) annotate(ns, name, key, value string) {
	k.t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, key, value)
	if _, err := k.Resource(lstest.GVRs["Installation"], ns).Patch(k.t.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		k.t.Fatalf("annotating Installation %s/%s: %v", ns, name, err)
	}
}

// dump logs the Landscaper objects in ns as the controllers left them.
func (k *diffKube) dump(ns string) {
	k.t.Helper()
	for _, kind := range []string{"Installation", "Execution", "DeployItem", "DataObject", "Target"} {
		list, err := k.Resource(lstest.GVRs[kind], ns).List(k.t.Context(), metav1.ListOptions{})
		if err != nil {
			k.t.Fatal(err)
		}
		for _, item := range list.Items {
			unstructured.RemoveNestedField(item.Object, "metadata", "managedFields")
			if kind == "DataObject" || kind == "Target" {
				unstructured.RemoveNestedField(item.Object, "data")
				unstructured.RemoveNestedField(item.Object, "spec", "config")
			}
			k.t.Logf("%s %s/%s:\n%s", kind, ns, item.GetName(), lsreferee.Compact(item.Object))
		}
	}
	for _, res := range takeoverObjects {
		list, err := k.Resource(schema.GroupVersionResource{Version: "v1", Resource: res}, ns).List(k.t.Context(), metav1.ListOptions{})
		if err != nil {
			k.t.Fatal(err)
		}
		for _, item := range list.Items {
			k.t.Logf("%s %s/%s: labels %v annotations %v owners %v", res, ns, item.GetName(), item.GetLabels(), item.GetAnnotations(), item.GetOwnerReferences())
		}
	}
}

// checkReleases fails the test unless each release in ns is deployed at
// revision, the revisions before it superseded; revision 0: unless each is
// gone, with its history.
func checkReleases(t *testing.T, k *diffKube, ns string, releases []string, revision int) {
	t.Helper()
	for _, name := range releases {
		var want []string
		for r := 1; r < revision; r++ {
			want = append(want, fmt.Sprintf("%d:superseded", r))
		}
		if revision > 0 {
			want = append(want, fmt.Sprintf("%d:deployed", revision))
		}
		got := releaseHistory(t, k, ns, name)
		slices.Sort(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("release %s/%s: history %v, want %v", ns, name, got, want)
		}
	}
}

// manifestTakeoverBlueprint deploys, with the manifest deployer, a
// ConfigMap holding a DataObject import and a Secret holding an import
// from a Secret, and exports the ConfigMap's greeting.
const manifestTakeoverBlueprint = blueprintHeader + `  - {name: greeting, type: data, schema: {type: string}}
  - {name: password, type: data, schema: {type: string}}
exports:
  - {name: greeting, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: app
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
                  metadata: {name: app, namespace: {{ .imports.namespace }}}
                  data: {greeting: {{ .imports.greeting | quote }}}
              - policy: manage
                manifest:
                  apiVersion: v1
                  kind: Secret
                  metadata: {name: app-credentials, namespace: {{ .imports.namespace }}}
                  stringData: {password: {{ .imports.password | quote }}}
            exports:
              exports:
                - key: greeting
                  jsonPath: .data.greeting
                  fromResource: {apiVersion: v1, kind: ConfigMap, name: app, namespace: {{ .imports.namespace }}}
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        greeting: {{ .values.deployitems.app.greeting | quote }}
`

// TestTakeoverFromLandscaper_manifest takes over a manifest installation
// the real controllers deployed, with a DataObject and a Secret import.
func TestTakeoverFromLandscaper_manifest(t *testing.T) {
	t.Parallel()
	takeOver(t, takeoverCase{diffCase: diffCase{
		name:      "to-manifest",
		blueprint: map[string]string{"blueprint.yaml": manifestTakeoverBlueprint},
		imports:   map[string]any{"greeting": "hello"},
		secrets:   map[string]string{"password": "s3cret"},
		targets:   []string{"cluster"},
	}})
}

// TestTakeoverFromLandscaper_helm takes over a helm release with an inline
// chart and one rendered as manifests (helmDeployment false).
func TestTakeoverFromLandscaper_helm(t *testing.T) {
	t.Parallel()
	takeOver(t, takeoverCase{diffCase: diffCase{
		name:      "to-helm",
		blueprint: map[string]string{"blueprint.yaml": helmBlueprint},
		imports: map[string]any{
			"chart":   helmtest.ArchiveBase64(t, helmtest.Demo, ""),
			"message": "hello from helm",
		},
		targets: []string{"cluster"},
	}, releases: []string{"demo"}})
}

// TestTakeoverFromLandscaper_subinstallations takes over a tree of
// sub-installations with data flowing between them through exports and
// importDataMappings, target lists and maps, and a mock item.
func TestTakeoverFromLandscaper_subinstallations(t *testing.T) {
	t.Parallel()
	takeOver(t, takeoverCase{diffCase: diffCase{
		name: "to-subinst",
		blueprint: map[string]string{
			"blueprint.yaml":          subinstBlueprint(),
			"consumer/blueprint.yaml": consumerBlueprint,
		},
		imports:     map[string]any{"prefix": "hello"},
		targets:     []string{"cluster"},
		targetLists: map[string]int{"fleet": 2},
		targetMaps:  map[string][]string{"regions": {"eu", "us"}},
	}})
}
