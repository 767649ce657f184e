package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	gopath "path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lsreferee"
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
	// secrets are the data imports held in Secrets (lsreferee's
	// SecretImports).
	secrets map[string]string
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

// installation is c as both sides get it, deploying into ns.
func (c diffCase) installation(ns string) lsreferee.Installation {
	return lsreferee.Installation{Name: c.name, Blueprint: c.blueprint, Imports: withNamespace(c.imports, ns),
		SecretImports: c.secrets, Targets: c.targets, TargetLists: c.targetLists, TargetMaps: c.targetMaps}
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
		k.Namespace(ns)
	}

	for _, ns := range []string{lsNS, tfNS} {
		for _, name := range c.strays {
			k.Create(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
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
		k.Delete(lstest.GVRs["Installation"], instNS, c.name)
		k.WaitGone(lstest.GVRs["Installation"], instNS, c.name)
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
			line := fmt.Sprintf("%s:\n    Landscaper: %s\n    provider:   %s", d.path, lsreferee.Compact(d.ls), lsreferee.Compact(d.tf))
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
		if lsreferee.Compact(a) == lsreferee.Compact(b) {
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

// runLandscaper writes c's Installation with its Targets and DataObjects
// into instNS, as Landscaper's docs write them, with the reconcile
// annotation, waits for its job to finish and reads the tree.
func runLandscaper(t *testing.T, k *diffKube, c diffCase, instNS string, run *diffRun) {
	t.Helper()
	run.renamed = k.Write(instNS, c.installation(run.ns))
	k.WaitJobFinished(instNS, c.name)

	rc, err := clientcmd.RESTConfigFromKubeConfig([]byte(k.Kubeconfig))
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
			list, err := k.D.Resource(lstest.GVRs["Installation"]).Namespace(ns).List(t.Context(), metav1.ListOptions{})
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
		obj := k.Get(lstest.GVRs["DeployItem"], instNS, di.Object)
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
	lsreferee.WriteProvider(t, w, k.Kubeconfig, c.installation(run.ns))

	out, code := w.Run(nil, "apply", "-input=false", "-no-color", "-auto-approve")
	if _, err := os.Stat(w.Path("terraform.tfstate")); os.IsNotExist(err) {
		// Refused at plan time: nothing ran.
		t.Logf("terraform apply exited %d before anything ran:\n%s", code, diagnostics(out))
		run.results = map[string]any{"phase": "(plan failed)"}
		return
	}
	attrs := w.Attributes("landscaper_installation", lsreferee.ProviderName)
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

// diffKube is the differential tests' view of the API server.
type diffKube struct {
	*lsreferee.Kube
	t *testing.T
}

func newDiffKube(t *testing.T, env *testenv.Env) *diffKube {
	t.Helper()
	k := lsreferee.NewKube(t, env.Kubeconfig())
	k.Timeout = diffTimeout
	return &diffKube{Kube: k, t: t}
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
		list, err := k.Resource(schema.GroupVersionResource{Version: "v1", Resource: res}, ns).List(k.t.Context(), metav1.ListOptions{})
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
		ri := k.Resource(schema.GroupVersionResource{Version: "v1", Resource: res}, ns)
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
	k.Poll(func() bool {
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
