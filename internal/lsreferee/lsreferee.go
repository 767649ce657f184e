// Package lsreferee gives one installation to Landscaper's real controllers
// (internal/testenv StartLandscaper) and to landscaper_installation through
// the terraform CLI, written the same way for both: the differential tests
// compare what each did, the scale benchmark (bench/landscaper) times them.
// On Landscaper's side the Installation, its Targets and DataObjects are
// written as Landscaper's docs write them; on the provider's, as a user
// writes a root module.
package lsreferee

import (
	"crypto/sha1" //nolint:gosec // Landscaper's names, not a security measure
	"encoding/base32"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
)

// DefaultTimeout bounds each wait of a Kube whose Timeout is zero.
const DefaultTimeout = 4 * time.Minute

// Installation is one installation as both sides get it.
type Installation struct {
	// Name names the Installation and the provider's installation.
	Name string
	// Blueprint holds the root blueprint's files by slash-separated path,
	// blueprint.yaml at least.
	Blueprint map[string]string
	// Imports are the data imports: a DataObject import-<name> each for
	// Landscaper, the attribute imports for the provider.
	Imports map[string]any
	// SecretImports are data imports held in Secrets: Landscaper reads each
	// from the key of the Secret import-<name> (secretRef), the provider
	// from sensitive_imports.
	SecretImports map[string]string
	// Targets, TargetLists and TargetMaps are the target imports: each
	// target is the cluster of the Kube, named after the import: <import>,
	// <import>-<index> and <import>-<key>.
	Targets     []string
	TargetLists map[string]int
	TargetMaps  map[string][]string
}

// Kube is a view of the API server that Landscaper reconciles against, and
// that both sides deploy to.
type Kube struct {
	T          testing.TB
	D          dynamic.Interface
	Kubeconfig string
	// Timeout bounds each wait; zero means DefaultTimeout.
	Timeout time.Duration
	// Interval is the time between two looks of a wait; zero means 200 ms.
	Interval time.Duration
}

// NewKube connects to the API server of kubeconfig.
func NewKube(t testing.TB, kubeconfig string) *Kube {
	t.Helper()
	rc, err := clientcmd.RESTConfigFromKubeConfig([]byte(kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	// A benchmark's waits and writes must not queue behind client-go's
	// default limit of 5 requests per second.
	rc.QPS, rc.Burst = -1, 0
	d, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return &Kube{T: t, D: d, Kubeconfig: kubeconfig}
}

// Resource is the client of gvr in ns ("" for cluster-scoped resources).
func (k *Kube) Resource(gvr schema.GroupVersionResource, ns string) dynamic.ResourceInterface {
	if ns == "" {
		return k.D.Resource(gvr)
	}
	return k.D.Resource(gvr).Namespace(ns)
}

// Create creates u, of a kind lstest.GVRs knows.
func (k *Kube) Create(u *unstructured.Unstructured) {
	k.T.Helper()
	gvr, ok := lstest.GVRs[u.GetKind()]
	if !ok {
		k.T.Fatalf("object of unknown kind %q", u.GetKind())
	}
	if _, err := k.Resource(gvr, u.GetNamespace()).Create(k.T.Context(), u, metav1.CreateOptions{}); err != nil {
		k.T.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

// Namespace creates the namespace ns.
func (k *Kube) Namespace(ns string) {
	k.T.Helper()
	k.Create(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": ns}}})
}

// Get reads the object name of gvr in ns; it must exist.
func (k *Kube) Get(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	k.T.Helper()
	u, err := k.Resource(gvr, ns).Get(k.T.Context(), name, metav1.GetOptions{})
	if err != nil {
		k.T.Fatalf("get %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return u
}

// Delete deletes the object name of gvr in ns; it must exist.
func (k *Kube) Delete(gvr schema.GroupVersionResource, ns, name string) {
	k.T.Helper()
	if err := k.Resource(gvr, ns).Delete(k.T.Context(), name, metav1.DeleteOptions{}); err != nil {
		k.T.Fatalf("delete %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
}

// Poll calls done every Interval until it returns true, failing the test
// with what() after Timeout.
func (k *Kube) Poll(done func() bool, what func() string) {
	k.T.Helper()
	timeout, interval := k.Timeout, k.Interval
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if interval == 0 {
		interval = 200 * time.Millisecond
	}
	deadline := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(deadline) {
			k.T.Fatalf("after %s: %s", timeout, what())
		}
		time.Sleep(interval)
	}
}

// WaitJobFinished waits until the Installation's job has finished:
// status.jobIDFinished equals a non-empty status.jobID, in a final phase.
func (k *Kube) WaitJobFinished(ns, name string) {
	k.T.Helper()
	var status map[string]any
	k.Poll(func() bool {
		u := k.Get(lstest.GVRs["Installation"], ns, name)
		status, _, _ = unstructured.NestedMap(u.Object, "status")
		job, _ := status["jobID"].(string)
		phase, _ := status["phase"].(string)
		return job != "" && status["jobIDFinished"] == job && (phase == "Succeeded" || phase == "Failed")
	}, func() string {
		return fmt.Sprintf("Installation %s/%s has not finished its job: status %s", ns, name, Compact(status))
	})
}

// WaitGone waits until the object name of gvr in ns is gone.
func (k *Kube) WaitGone(gvr schema.GroupVersionResource, ns, name string) {
	k.T.Helper()
	var last any
	k.Poll(func() bool {
		u, err := k.Resource(gvr, ns).Get(k.T.Context(), name, metav1.GetOptions{})
		if err != nil {
			return true
		}
		last = u.Object["status"]
		return false
	}, func() string {
		return fmt.Sprintf("%s %s/%s is still there: status %s", gvr.Resource, ns, name, Compact(last))
	})
}

// ContextName is the name Landscaper gives the Target or DataObject of an
// import in an installation's context ("Inst.<installation>"): the sha1 of
// "<context>/<name>" in lower-case base32 without padding.
func ContextName(instContext, name string) string {
	h := sha1.Sum([]byte(instContext + "/" + name))
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(h[:]))
}

// Write writes inst into ns as Landscaper's docs write it: its Targets
// (each the cluster of k), a DataObject import-<name> for each data import,
// and the Installation with its blueprint inline and the reconcile
// annotation, exporting each data export of the blueprint to a DataObject
// export-<name>. It returns the names Landscaper gives the root's targets in
// its context (where sub-installations import them: a hash of their import,
// see ContextName), mapped to the names given.
func (k *Kube) Write(ns string, inst Installation) (renamed map[string]string) {
	k.T.Helper()
	targetImports, renamed := k.writeTargets(ns, inst)
	k.writeInstallation(ns, inst, targetImports, k.writeDataObjects(ns, inst))
	return renamed
}

// writeTargets writes inst's Targets into ns, each the cluster of k, and
// returns their imports as the Installation's spec lists them, and the
// names Landscaper gives them in the root's context, mapped to the names
// given.
func (k *Kube) writeTargets(ns string, inst Installation) (imports []any, renamed map[string]string) {
	k.T.Helper()
	target := func(name string) {
		k.Create(&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Target",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec": map[string]any{"type": "landscaper.gardener.cloud/kubernetes-cluster",
				"config": map[string]any{"kubeconfig": k.Kubeconfig}},
		}})
	}
	renamed = map[string]string{}
	instContext := "Inst." + inst.Name
	for _, name := range inst.Targets {
		target(name)
		renamed[ContextName(instContext, name)] = name
		imports = append(imports, map[string]any{"name": name, "target": name})
	}
	for _, name := range slices.Sorted(maps.Keys(inst.TargetLists)) {
		var names []any
		for i := range inst.TargetLists[name] {
			n := fmt.Sprintf("%s-%d", name, i)
			target(n)
			renamed[ContextName(instContext, fmt.Sprintf("%s[%d]", name, i))] = n
			names = append(names, n)
		}
		imports = append(imports, map[string]any{"name": name, "targets": names})
	}
	for _, name := range slices.Sorted(maps.Keys(inst.TargetMaps)) {
		m := map[string]any{}
		for _, key := range inst.TargetMaps[name] {
			n := name + "-" + key
			target(n)
			renamed[ContextName(instContext, name+"["+key+"]")] = n
			m[key] = n
		}
		imports = append(imports, map[string]any{"name": name, "targetMap": m})
	}
	return imports, renamed
}

// writeDataObjects writes a DataObject import-<name> into ns for each of
// inst's data imports, a Secret import-<name> for each of its secret
// imports, and returns the imports as the Installation's spec
// lists them.
func (k *Kube) writeDataObjects(ns string, inst Installation) (imports []any) {
	k.T.Helper()
	for _, name := range slices.Sorted(maps.Keys(inst.Imports)) {
		k.Create(&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "DataObject",
			"metadata": map[string]any{"name": "import-" + name, "namespace": ns},
			"data":     inst.Imports[name],
		}})
		imports = append(imports, map[string]any{"name": name, "dataRef": "import-" + name})
	}
	for _, name := range slices.Sorted(maps.Keys(inst.SecretImports)) {
		k.Create(&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata":   map[string]any{"name": "import-" + name, "namespace": ns},
			"stringData": map[string]any{name: inst.SecretImports[name]},
		}})
		imports = append(imports, map[string]any{"name": name,
			"secretRef": map[string]any{"name": "import-" + name, "key": name}})
	}
	return imports
}

// writeInstallation writes inst's Installation into ns with its blueprint
// inline and the reconcile annotation, importing targetImports and
// dataImports and exporting each data
// export of the blueprint to a DataObject export-<name>.
func (k *Kube) writeInstallation(ns string, inst Installation, targetImports, dataImports []any) {
	k.T.Helper()
	var dataExports []any
	for _, name := range blueprintDataExports(k.T, inst.Blueprint["blueprint.yaml"]) {
		dataExports = append(dataExports, map[string]any{"name": name, "dataRef": "export-" + name})
	}
	imports := map[string]any{}
	if dataImports != nil {
		imports["data"] = dataImports
	}
	if targetImports != nil {
		imports["targets"] = targetImports
	}
	spec := map[string]any{
		"blueprint": map[string]any{"inline": map[string]any{"filesystem": NestedFilesystem(inst.Blueprint)}},
		"imports":   imports,
	}
	if dataExports != nil {
		spec["exports"] = map[string]any{"data": dataExports}
	}
	k.Create(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Installation",
		"metadata": map[string]any{"name": inst.Name, "namespace": ns,
			"annotations": map[string]any{"landscaper.gardener.cloud/operation": "reconcile"}},
		"spec": spec,
	}})
}

// ProviderName is the name of the landscaper_installation WriteProvider
// writes.
const ProviderName = "installation"

// WriteProvider writes inst into w as a root module with one
// landscaper_installation (ProviderName): the blueprint as a
// directory, the imports and the secret imports as JSON files, each target inline with k's
// kubeconfig.
func WriteProvider(t testing.TB, w *acctest.Workspace, kubeconfig string, inst Installation) {
	t.Helper()
	acctest.WriteFile(t, w.Path("kubeconfig"), kubeconfig)
	for p, content := range inst.Blueprint {
		full := filepath.Join(w.Path("blueprint"), filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		acctest.WriteFile(t, full, content)
	}
	imports := inst.Imports
	if imports == nil {
		imports = map[string]any{}
	}
	b, err := json.Marshal(imports)
	if err != nil {
		t.Fatal(err)
	}
	acctest.WriteFile(t, w.Path("imports.json"), string(b))
	if len(inst.SecretImports) > 0 {
		b, err := json.Marshal(inst.SecretImports)
		if err != nil {
			t.Fatal(err)
		}
		acctest.WriteFile(t, w.Path("secrets.json"), string(b))
	}
	w.Config(ProviderConfig(inst))
}

// ProviderConfig is the root module WriteProvider writes.
func ProviderConfig(inst Installation) string {
	inline := func(name string) string {
		return fmt.Sprintf(`{ name = %q, type = "landscaper.gardener.cloud/kubernetes-cluster", config = local.cluster }`, name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `
locals {
  cluster = sensitive(yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }))
}

resource "landscaper_installation" %q {
  name      = %q
  blueprint = { path = "${path.module}/blueprint" }
  imports   = jsondecode(file("${path.module}/imports.json"))
  timeouts  = { create = "4m", update = "4m", delete = "4m" }
`, ProviderName, inst.Name)
	if len(inst.SecretImports) > 0 {
		b.WriteString("  sensitive_imports = sensitive(jsondecode(file(\"${path.module}/secrets.json\")))\n")
	}
	if len(inst.Targets) > 0 {
		b.WriteString("  targets = {\n")
		for _, name := range inst.Targets {
			fmt.Fprintf(&b, "    %q = %s\n", name, inline(name))
		}
		b.WriteString("  }\n")
	}
	if len(inst.TargetLists) > 0 {
		b.WriteString("  target_lists = {\n")
		for _, name := range slices.Sorted(maps.Keys(inst.TargetLists)) {
			var elems []string
			for i := range inst.TargetLists[name] {
				elems = append(elems, inline(fmt.Sprintf("%s-%d", name, i)))
			}
			fmt.Fprintf(&b, "    %q = [%s]\n", name, strings.Join(elems, ", "))
		}
		b.WriteString("  }\n")
	}
	if len(inst.TargetMaps) > 0 {
		b.WriteString("  target_maps = {\n")
		for _, name := range slices.Sorted(maps.Keys(inst.TargetMaps)) {
			var elems []string
			for _, key := range inst.TargetMaps[name] {
				elems = append(elems, fmt.Sprintf("%q = %s", key, inline(name+"-"+key)))
			}
			fmt.Fprintf(&b, "    %q = { %s }\n", name, strings.Join(elems, ", "))
		}
		b.WriteString("  }\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// NestedFilesystem is files by slash-separated path in Landscaper's
// inline file system: a directory is an object of its entries.
func NestedFilesystem(files map[string]string) map[string]any {
	root := map[string]any{}
	for p, content := range files {
		dir := root
		parts := strings.Split(p, "/")
		for _, d := range parts[:len(parts)-1] {
			sub, ok := dir[d].(map[string]any)
			if !ok {
				sub = map[string]any{}
				dir[d] = sub
			}
			dir = sub
		}
		dir[parts[len(parts)-1]] = content
	}
	return root
}

// blueprintDataExports are the names of the blueprint's data exports.
func blueprintDataExports(t testing.TB, blueprint string) []string {
	t.Helper()
	var bp struct {
		Exports []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"exports"`
	}
	if err := yaml.Unmarshal([]byte(blueprint), &bp); err != nil {
		t.Fatalf("blueprint.yaml: %v", err)
	}
	var names []string
	for _, e := range bp.Exports {
		if e.Type == "" || e.Type == "data" {
			names = append(names, e.Name)
		}
	}
	return names
}

// Compact is v as compact JSON, "(none)" for nil: a value in a message.
func Compact(v any) string {
	if v == nil {
		return "(none)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
