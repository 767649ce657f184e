package e2e

import (
	"context"
	"crypto/sha1" //nolint:gosec // Landscaper's names, not a security measure
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	gopath "path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/testenv"
)

// realLandscaper is Landscaper's own controllers on a control plane of
// their own, started by the first differential test; never the control
// plane of the other tests, whose Landscaper objects (lstest) are written
// as if by controllers that must not touch them.
var realLandscaper testenv.SharedLandscaper

// diffTimeout bounds each run of a differential case: Landscaper's until
// its Installation's job finished or it is gone, Terraform's apply or
// destroy.
const diffTimeout = 4 * time.Minute

// diffCase is one installation applied twice against one API server:
// by Landscaper, from an Installation with its Targets and DataObjects
// written as Landscaper's docs write them, and by landscaper_installation
// through the terraform CLI. Each run deploys into a namespace of its own,
// which the blueprint gets as the data import "namespace".
type diffCase struct {
	// name names the installation and the namespaces: <name>-inst holds
	// Landscaper's objects (Installation, Targets, DataObjects),
	// <name>-ls what Landscaper deployed, <name>-tf what the provider did.
	name string
	// blueprint holds the root blueprint's files, blueprint.yaml at least.
	blueprint map[string]string
	// imports are the data imports besides "namespace".
	imports map[string]any
	// targets, targetLists and targetMaps are the target imports: each
	// target is the test cluster, named after the import: <import>,
	// <import>-<index> and <import>-<key>.
	targets     []string
	targetLists map[string]int
	targetMaps  map[string][]string
	// resources are the kinds (plural, core/v1) of the objects compared in
	// the deploy namespaces.
	resources []string
	// strays are ConfigMaps no one deploys, created in each deploy
	// namespace before the runs (for deletion groups that delete all
	// resources of a kind).
	strays []string
	// deleteOrder compares the order in which objects were deleted, not
	// only which.
	deleteOrder bool
	// explained are the differences the differences guide explains, by the
	// path of the compared value ("items/x" covers "items/x/..."; a pattern
	// as path.Match reads it, "objects/configmaps/*/data/target"), with the
	// guide's section.
	explained map[string]string
}

// diffRun is what one run left: phases, error codes, exports, objects and
// what its deletion did.
type diffRun struct {
	who string // "Landscaper" or "provider"
	ns  string // the deploy namespace
	// results holds every compared value by path: phase,
	// installations/<path>, items/<key>, codes/<key>, exports/<name>,
	// objects/<resource>/<name>.
	results map[string]any
	// deleted are the objects deleted, "<resource>/<name>", in the order
	// their deletion was seen; left what deletion left behind.
	deleted []string
	left    map[string]any
	// renamed maps the names of the Targets Landscaper made in the root's
	// context to the names of the targets they stand for.
	renamed map[string]string
}

// contextName is the name Landscaper gives the Target or DataObject of an
// import in an installation's context ("Inst.<installation>"): the sha1 of
// "<context>/<name>" in lower-case base32 without padding.
func contextName(instContext, name string) string {
	h := sha1.Sum([]byte(instContext + "/" + name))
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(h[:]))
}

// differential runs c with Landscaper and with the provider, and compares
// the results, then the deletions.
func differential(t *testing.T, c diffCase) {
	t.Helper()
	w := newWorkspace(t) // first: it skips the test without TF_ACC, before Landscaper starts
	env, _ := realLandscaper.Get(t)
	k := newDiffKube(t, env)
	instNS, lsNS, tfNS := c.name+"-inst", c.name+"-ls", c.name+"-tf"
	for _, ns := range []string{instNS, lsNS, tfNS} {
		k.create(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": ns}}})
	}

	for _, ns := range []string{lsNS, tfNS} {
		for _, name := range c.strays {
			k.create(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": name, "namespace": ns}, "data": map[string]any{"role": "stray"}}})
		}
	}

	ls := &diffRun{who: "Landscaper", ns: lsNS}
	tf := &diffRun{who: "provider", ns: tfNS}
	runLandscaper(t, k, c, instNS, ls)
	runProvider(t, w, k, c, tf)
	for _, r := range []*diffRun{ls, tf} {
		maps.Copy(r.results, k.objects(r.ns, c.resources))
		for p, v := range r.results {
			v = replaceStrings(v, r.ns, "${namespace}")
			for from, to := range r.renamed {
				v = replaceStrings(v, from, to)
			}
			r.results[p] = v
		}
	}
	report(t, c, "apply", ls.results, tf.results)

	ls.deleted, ls.left = k.deleting(ls.ns, c.resources, func() {
		k.delete(lstest.GVRs["Installation"], instNS, c.name)
		k.waitGone(lstest.GVRs["Installation"], instNS, c.name)
	})
	tf.deleted, tf.left = k.deleting(tf.ns, c.resources, func() {
		if out, code := w.Run(nil, "destroy", "-input=false", "-no-color", "-auto-approve"); code != 0 {
			t.Fatalf("terraform destroy exited %d:\n%s", code, out)
		}
	})
	lsDel, tfDel := map[string]any{"left": ls.left}, map[string]any{"left": tf.left}
	if c.deleteOrder {
		lsDel["order"], tfDel["order"] = ls.deleted, tf.deleted
	} else {
		lsDel["deleted"], tfDel["deleted"] = slices.Sorted(slices.Values(ls.deleted)), slices.Sorted(slices.Values(tf.deleted))
	}
	report(t, c, "delete", lsDel, tfDel)
}

// report fails t on every difference between Landscaper's values and the
// provider's that c does not explain, and logs the explained ones. Objects
// are compared field by field, so an explanation can name one field.
func report(t *testing.T, c diffCase, stage string, ls, tf map[string]any) {
	t.Helper()
	var equal, explained, differ []string
	for _, p := range slices.Sorted(maps.Keys(union(ls, tf))) {
		diffs := leafDiffs(p, ls[p], tf[p])
		if len(diffs) == 0 {
			equal = append(equal, p)
			continue
		}
		for _, d := range diffs {
			line := fmt.Sprintf("%s:\n    Landscaper: %s\n    provider:   %s", d.path, compact(d.ls), compact(d.tf))
			if why := explanation(c.explained, d.path); why != "" {
				explained = append(explained, line+"\n    explained: "+why)
				continue
			}
			differ = append(differ, line)
		}
	}
	t.Logf("differential %s, %s: %d equal, %d explained, %d differ; equal: %s", c.name, stage, len(equal), len(explained), len(differ), strings.Join(equal, ", "))
	for _, e := range explained {
		t.Logf("explained difference in %s", e)
	}
	for _, d := range differ {
		t.Errorf("%s: Landscaper and the provider differ in %s", stage, d)
	}
}

type leafDiff struct {
	path   string
	ls, tf any
}

// leafDiffs are the differences between a and b at path: field by field
// where both are objects, else the whole values. Values compare as JSON, so
// numbers compare by value whatever Go type a decoder chose.
func leafDiffs(path string, a, b any) []leafDiff {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if compact(a) == compact(b) {
			return nil
		}
		return []leafDiff{{path, a, b}}
	}
	var out []leafDiff
	for _, k := range slices.Sorted(maps.Keys(union(am, bm))) {
		out = append(out, leafDiffs(path+"/"+k, am[k], bm[k])...)
	}
	return out
}

// explanation is the guide's section that explains a difference at path:
// the first of explained whose key matches path or a parent of it, as a
// path.Match pattern ("objects/configmaps/*/data/target").
func explanation(explained map[string]string, p string) string {
	for _, pattern := range slices.Sorted(maps.Keys(explained)) {
		for q := p; ; q = gopath.Dir(q) {
			if ok, _ := gopath.Match(pattern, q); ok {
				return explained[pattern]
			}
			if !strings.Contains(q, "/") {
				break
			}
		}
	}
	return ""
}

func union(a, b map[string]any) map[string]any {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

func compact(v any) string {
	if v == nil {
		return "(none)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// runLandscaper writes c's Installation with its Targets and DataObjects
// into instNS, as Landscaper's docs write them, with the reconcile
// annotation, waits for its job to finish and reads the tree.
func runLandscaper(t *testing.T, k *diffKube, c diffCase, instNS string, run *diffRun) {
	t.Helper()
	target := func(name string) {
		k.create(&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Target",
			"metadata": map[string]any{"name": name, "namespace": instNS},
			"spec": map[string]any{"type": "landscaper.gardener.cloud/kubernetes-cluster",
				"config": map[string]any{"kubeconfig": k.kubeconfig}},
		}})
	}
	var targetImports []any
	// Landscaper names the root's targets in its context, where
	// sub-installations import them, by a hash of their import; the
	// provider by the names given.
	run.renamed = map[string]string{}
	instContext := "Inst." + c.name
	for _, name := range c.targets {
		target(name)
		run.renamed[contextName(instContext, name)] = name
		targetImports = append(targetImports, map[string]any{"name": name, "target": name})
	}
	for _, name := range slices.Sorted(maps.Keys(c.targetLists)) {
		var names []any
		for i := range c.targetLists[name] {
			n := fmt.Sprintf("%s-%d", name, i)
			target(n)
			run.renamed[contextName(instContext, fmt.Sprintf("%s[%d]", name, i))] = n
			names = append(names, n)
		}
		targetImports = append(targetImports, map[string]any{"name": name, "targets": names})
	}
	for _, name := range slices.Sorted(maps.Keys(c.targetMaps)) {
		m := map[string]any{}
		for _, key := range c.targetMaps[name] {
			n := name + "-" + key
			target(n)
			run.renamed[contextName(instContext, name+"["+key+"]")] = n
			m[key] = n
		}
		targetImports = append(targetImports, map[string]any{"name": name, "targetMap": m})
	}
	var dataImports []any
	for name, value := range withNamespace(c.imports, run.ns) {
		k.create(&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "DataObject",
			"metadata": map[string]any{"name": "import-" + name, "namespace": instNS},
			"data":     value,
		}})
		dataImports = append(dataImports, map[string]any{"name": name, "dataRef": "import-" + name})
	}
	var dataExports []any
	for _, name := range blueprintDataExports(t, c.blueprint["blueprint.yaml"]) {
		dataExports = append(dataExports, map[string]any{"name": name, "dataRef": "export-" + name})
	}
	files := nestedFilesystem(c.blueprint)
	imports := map[string]any{}
	if dataImports != nil {
		imports["data"] = dataImports
	}
	if targetImports != nil {
		imports["targets"] = targetImports
	}
	spec := map[string]any{
		"blueprint": map[string]any{"inline": map[string]any{"filesystem": files}},
		"imports":   imports,
	}
	if dataExports != nil {
		spec["exports"] = map[string]any{"data": dataExports}
	}
	k.create(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Installation",
		"metadata": map[string]any{"name": c.name, "namespace": instNS,
			"annotations": map[string]any{"landscaper.gardener.cloud/operation": "reconcile"}},
		"spec": spec,
	}})
	k.waitJobFinished(instNS, c.name)

	rc, err := clientcmd.RESTConfigFromKubeConfig([]byte(k.kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	reader, err := lscluster.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := reader.Read(t.Context(), instNS, c.name)
	if err != nil {
		t.Fatalf("reading what Landscaper did: %v", err)
	}
	if inst.Phase != "Succeeded" {
		for _, ns := range []string{instNS} {
			list, err := k.d.Resource(lstest.GVRs["Installation"]).Namespace(ns).List(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, i := range list.Items {
				msg, _, _ := unstructured.NestedString(i.Object, "status", "lastError", "message")
				t.Logf("Landscaper's Installation %s: %s", i.GetName(), msg)
			}
		}
	}
	run.results = map[string]any{"phase": inst.Phase, "installations/": inst.Phase}
	var walk func(prefix string, subs map[string]*lscluster.Subinstallation)
	walk = func(prefix string, subs map[string]*lscluster.Subinstallation) {
		for name, sub := range subs {
			run.results["installations/"+prefix+name] = sub.Phase
			walk(prefix+name+"/", sub.Subinstallations)
		}
	}
	walk("", inst.Subinstallations)
	for key, di := range inst.DeployItems() {
		run.results["items/"+key] = di.Phase
		obj := k.get(lstest.GVRs["DeployItem"], instNS, di.Object)
		codes, _, _ := unstructured.NestedStringSlice(obj.Object, "status", "lastError", "codes")
		reason, _, _ := unstructured.NestedString(obj.Object, "status", "lastError", "reason")
		if di.Phase == "Failed" {
			run.results["codes/"+key] = sortedCodes(codes)
			run.results["reasons/"+key] = reason
		}
	}
	for name, e := range inst.Exports {
		if e.Known {
			run.results["exports/"+name] = e.Value
		}
	}
}

// runProvider applies c with landscaper_installation through the
// terraform CLI in w and reads the state.
func runProvider(t *testing.T, w *acctest.Workspace, k *diffKube, c diffCase, run *diffRun) {
	t.Helper()
	acctest.WriteFile(t, w.Path("kubeconfig"), k.kubeconfig)
	for p, content := range c.blueprint {
		full := filepath.Join(w.Path("blueprint"), filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		acctest.WriteFile(t, full, content)
	}
	imports, err := json.Marshal(withNamespace(c.imports, run.ns))
	if err != nil {
		t.Fatal(err)
	}
	acctest.WriteFile(t, w.Path("imports.json"), string(imports))

	inline := func(name string) string {
		return fmt.Sprintf(`{ name = %q, type = "landscaper.gardener.cloud/kubernetes-cluster", config = local.cluster }`, name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `
locals {
  cluster = sensitive(yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }))
}

resource "landscaper_installation" "diff" {
  name      = %q
  blueprint = { path = "${path.module}/blueprint" }
  imports   = jsondecode(file("${path.module}/imports.json"))
  timeouts  = { create = "4m", update = "4m", delete = "4m" }
`, c.name)
	if len(c.targets) > 0 {
		b.WriteString("  targets = {\n")
		for _, name := range c.targets {
			fmt.Fprintf(&b, "    %q = %s\n", name, inline(name))
		}
		b.WriteString("  }\n")
	}
	if len(c.targetLists) > 0 {
		b.WriteString("  target_lists = {\n")
		for _, name := range slices.Sorted(maps.Keys(c.targetLists)) {
			var elems []string
			for i := range c.targetLists[name] {
				elems = append(elems, inline(fmt.Sprintf("%s-%d", name, i)))
			}
			fmt.Fprintf(&b, "    %q = [%s]\n", name, strings.Join(elems, ", "))
		}
		b.WriteString("  }\n")
	}
	if len(c.targetMaps) > 0 {
		b.WriteString("  target_maps = {\n")
		for _, name := range slices.Sorted(maps.Keys(c.targetMaps)) {
			var elems []string
			for _, key := range c.targetMaps[name] {
				elems = append(elems, fmt.Sprintf("%q = %s", key, inline(name+"-"+key)))
			}
			fmt.Fprintf(&b, "    %q = { %s }\n", name, strings.Join(elems, ", "))
		}
		b.WriteString("  }\n")
	}
	b.WriteString("}\n")
	w.Config(b.String())

	out, code := w.Run(nil, "apply", "-input=false", "-no-color", "-auto-approve")
	if _, err := os.Stat(w.Path("terraform.tfstate")); os.IsNotExist(err) {
		// Refused at plan time: nothing ran.
		t.Logf("terraform apply exited %d before anything ran:\n%s", code, diagnostics(out))
		run.results = map[string]any{"phase": "(plan failed)"}
		return
	}
	attrs := w.Attributes("landscaper_installation", "diff")
	phase, _ := acctest.Dig(attrs, "status", "phase").(string)
	if (code == 0) != (phase == "Succeeded") {
		t.Fatalf("terraform apply exited %d with the installation %s:\n%s", code, phase, out)
	}
	if code != 0 {
		t.Logf("terraform apply exited %d:\n%s", code, diagnostics(out))
	}
	run.results = map[string]any{"phase": phase}
	installations, _ := acctest.Dig(attrs, "status", "installations").(map[string]any)
	for p := range installations {
		run.results["installations/"+p] = acctest.Dig(installations, p, "phase")
	}
	items, _ := acctest.Dig(attrs, "status", "deploy_items").(map[string]any)
	for key, phase := range items {
		run.results["items/"+key] = phase
		if phase == "Failed" {
			codes, _ := acctest.Dig(attrs, "status", "deploy_item_errors", key, "codes").([]any)
			var s []string
			for _, c := range codes {
				s = append(s, fmt.Sprint(c))
			}
			run.results["codes/"+key] = sortedCodes(s)
			run.results["reasons/"+key] = acctest.Dig(attrs, "status", "deploy_item_errors", key, "reason")
		}
	}
	for _, attr := range []string{"exports", "sensitive_exports"} {
		exports, _ := acctest.Dig(attrs, attr, "value").(map[string]any)
		for name, v := range exports {
			if v != nil {
				run.results["exports/"+name] = v
			}
		}
	}
}

// nestedFilesystem is files by slash-separated path in Landscaper's
// inline file system: a directory is an object of its entries.
func nestedFilesystem(files map[string]string) map[string]any {
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

// diagnostics is the errors of a terraform output, from the first "Error:".
func diagnostics(out string) string {
	if i := strings.Index(out, "Error:"); i >= 0 {
		return out[i:]
	}
	return out
}

func sortedCodes(codes []string) []any {
	out := []any{}
	for _, c := range slices.Sorted(slices.Values(codes)) {
		out = append(out, c)
	}
	return out
}

// withNamespace is imports with "namespace" set to ns.
func withNamespace(imports map[string]any, ns string) map[string]any {
	out := maps.Clone(imports)
	if out == nil {
		out = map[string]any{}
	}
	out["namespace"] = ns
	return out
}

// blueprintDataExports are the names of the blueprint's data exports.
func blueprintDataExports(t *testing.T, blueprint string) []string {
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

// diffKube is the differential tests' view of the API server.
type diffKube struct {
	t          *testing.T
	d          dynamic.Interface
	kubeconfig string
}

func newDiffKube(t *testing.T, env *testenv.Env) *diffKube {
	t.Helper()
	rc, err := clientcmd.RESTConfigFromKubeConfig([]byte(env.Kubeconfig()))
	if err != nil {
		t.Fatal(err)
	}
	d, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return &diffKube{t: t, d: d, kubeconfig: env.Kubeconfig()}
}

func (k *diffKube) resource(gvr schema.GroupVersionResource, ns string) dynamic.ResourceInterface {
	if ns == "" {
		return k.d.Resource(gvr)
	}
	return k.d.Resource(gvr).Namespace(ns)
}

func (k *diffKube) create(u *unstructured.Unstructured) {
	k.t.Helper()
	gvr, ok := lstest.GVRs[u.GetKind()]
	if !ok {
		k.t.Fatalf("object of unknown kind %q", u.GetKind())
	}
	if _, err := k.resource(gvr, u.GetNamespace()).Create(k.t.Context(), u, metav1.CreateOptions{}); err != nil {
		k.t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

func (k *diffKube) get(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	k.t.Helper()
	u, err := k.resource(gvr, ns).Get(k.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		k.t.Fatalf("get %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return u
}

func (k *diffKube) delete(gvr schema.GroupVersionResource, ns, name string) {
	k.t.Helper()
	if err := k.resource(gvr, ns).Delete(k.t.Context(), name, metav1.DeleteOptions{}); err != nil {
		k.t.Fatalf("delete %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
}

// poll calls done every 200 ms until it returns true, failing the test
// with what() after diffTimeout.
func (k *diffKube) poll(done func() bool, what func() string) {
	k.t.Helper()
	deadline := time.Now().Add(diffTimeout)
	for !done() {
		if time.Now().After(deadline) {
			k.t.Fatalf("after %s: %s", diffTimeout, what())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitJobFinished waits until the Installation's job has finished:
// status.jobIDFinished equals a non-empty status.jobID, in a final phase.
func (k *diffKube) waitJobFinished(ns, name string) {
	k.t.Helper()
	var status map[string]any
	k.poll(func() bool {
		u := k.get(lstest.GVRs["Installation"], ns, name)
		status, _, _ = unstructured.NestedMap(u.Object, "status")
		job, _ := status["jobID"].(string)
		phase, _ := status["phase"].(string)
		return job != "" && status["jobIDFinished"] == job && (phase == "Succeeded" || phase == "Failed")
	}, func() string {
		return fmt.Sprintf("Installation %s/%s has not finished its job: status %s", ns, name, compact(status))
	})
}

func (k *diffKube) waitGone(gvr schema.GroupVersionResource, ns, name string) {
	k.t.Helper()
	var last any
	k.poll(func() bool {
		u, err := k.resource(gvr, ns).Get(k.t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return true
		}
		last = u.Object["status"]
		return false
	}, func() string {
		return fmt.Sprintf("%s %s/%s is still there: status %s", gvr.Resource, ns, name, compact(last))
	})
}

// skipped are objects no deployer made: what Kubernetes puts into every
// namespace.
var skipped = map[string]bool{"configmaps/kube-root-ca.crt": true}

// objects reads the objects of the resources in ns, normalised by
// normalise, by "objects/<resource>/<name>".
func (k *diffKube) objects(ns string, resources []string) map[string]any {
	k.t.Helper()
	out := map[string]any{}
	for _, res := range resources {
		list, err := k.resource(schema.GroupVersionResource{Version: "v1", Resource: res}, ns).List(k.t.Context(), metav1.ListOptions{})
		if err != nil {
			k.t.Fatal(err)
		}
		for _, item := range list.Items {
			if skipped[res+"/"+item.GetName()] {
				continue
			}
			out["objects/"+res+"/"+item.GetName()] = normalise(item.Object, ns)
		}
	}
	return out
}

// deleting runs del while it watches the resources in ns, and returns the
// objects deleted, in the order their deletion was seen, and those left.
func (k *diffKube) deleting(ns string, resources []string, del func()) (deleted []string, left map[string]any) {
	k.t.Helper()
	ctx, cancel := context.WithCancel(k.t.Context())
	defer cancel()
	var (
		mu   sync.Mutex
		seen []string
		wg   sync.WaitGroup
	)
	before := k.objects(ns, resources)
	for _, res := range resources {
		ri := k.resource(schema.GroupVersionResource{Version: "v1", Resource: res}, ns)
		list, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			k.t.Fatal(err)
		}
		wi, err := ri.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
		if err != nil {
			k.t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer wi.Stop()
			for ev := range wi.ResultChan() {
				if u, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type == watch.Deleted && !skipped[res+"/"+u.GetName()] {
					mu.Lock()
					seen = append(seen, res+"/"+u.GetName())
					mu.Unlock()
				}
			}
		}()
	}
	del()
	left = k.objects(ns, resources)
	want := len(before) - len(left)
	k.poll(func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) >= want
	}, func() string { return fmt.Sprintf("saw %d deletions in %s, want %d", len(seen), ns, want) })
	cancel()
	wg.Wait()
	out := map[string]any{}
	for p, v := range left {
		out[strings.TrimPrefix(p, "objects/")] = v
	}
	return seen, out
}

// normalise makes an object of one run comparable with the other's: the
// API server's bookkeeping and the deployers' managed labels (whose values
// name a DeployItem in Landscaper and an item of the provider's) are set
// aside, a Secret's data is decoded, a helm release's record is reduced to
// its labels, and the run's namespace reads ${namespace}.
func normalise(obj map[string]any, ns string) any {
	obj = deepCopy(obj)
	meta, _ := obj["metadata"].(map[string]any)
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"} {
		delete(meta, f)
	}
	if labels, ok := meta["labels"].(map[string]any); ok {
		delete(labels, kube.ManifestManagedLabel)
		delete(labels, lscluster.HelmManagedLabel)
		if len(labels) == 0 {
			delete(meta, "labels")
		}
	}
	if obj["kind"] == "Secret" {
		if obj["type"] == "helm.sh/release.v1" {
			// The record itself is helm's; its labels say what it records,
			// but when.
			delete(obj, "data")
			if labels, ok := meta["labels"].(map[string]any); ok {
				delete(labels, "createdAt")
				delete(labels, "modifiedAt")
			}
		}
		if data, ok := obj["data"].(map[string]any); ok {
			for key, v := range data {
				if s, ok := v.(string); ok {
					if dec, err := base64.StdEncoding.DecodeString(s); err == nil {
						data[key] = string(dec)
					}
				}
			}
		}
	}
	return replaceStrings(obj, ns, "${namespace}")
}

func deepCopy(obj map[string]any) map[string]any {
	b, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// replaceStrings replaces old with repl in every string of v, keys included.
func replaceStrings(v any, old, repl string) any {
	switch v := v.(type) {
	case string:
		return strings.ReplaceAll(v, old, repl)
	case map[string]any:
		out := make(map[string]any, len(v))
		for key, e := range v {
			out[strings.ReplaceAll(key, old, repl)] = replaceStrings(e, old, repl)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = replaceStrings(e, old, repl)
		}
		return out
	default:
		return v
	}
}
