package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
)

// lstestOmits are the fields of Landscaper's Executions and DeployItems
// that lstest leaves out, with the reason: nothing reads them, or (the
// finalizers) no controller in the tests that use lstest would remove
// them.
var lstestOmits = map[string]string{
	"metadata.finalizers": "no controller removes them where lstest writes",
	"metadata.annotations.landscaper.gardener.cloud/reconcile-time": "a time",
	"status.transitionTimes":     "times",
	"status.phaseTransitionTime": "a time",
	"status.lastReconcileTime":   "a time",
	"status.jobIDGenerationTime": "a time",
	"status.exportRef":           "the export DataObject or Secret, which the reader does not read",
	"status.conditions":          "the mock deployer's validation condition",
}

// expectLstestFollows fails the test where the Executions in ns and their
// DeployItems, as Landscaper's own controllers left them, differ in shape
// from what lstest.Execution writes for the same deploy items into the
// control plane without controllers: the keys of labels and annotations,
// owner references, spec and status (the items' config and provider
// status, being the same input, by their presence), and the DeployItems'
// names.
func expectLstestFollows(t *testing.T, k *diffKube, ns string) {
	t.Helper()
	execs, err := k.Resource(lstest.GVRs["Execution"], ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(execs.Items) == 0 {
		t.Fatalf("no Execution in %s", ns)
	}
	c := newLandscaperCluster(t)
	fakeNS := ns + "-lstest"
	c.write("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + fakeNS + "}\n")
	for i := range execs.Items {
		expectLstestExecution(t, k, c, &execs.Items[i], fakeNS)
	}
}

// expectLstestExecution compares exec, an Execution Landscaper wrote, and
// its DeployItems with what lstest writes for them into fakeNS.
func expectLstestExecution(t *testing.T, k *diffKube, c *landscaperCluster, exec *unstructured.Unstructured, fakeNS string) {
	t.Helper()
	ns, name := exec.GetNamespace(), exec.GetName()
	compressed, _, _ := unstructured.NestedString(exec.Object, "spec", "deployItemsCompressed")
	var templates []map[string]any
	if err := json.Unmarshal(gunzipBase64(t, compressed), &templates); err != nil {
		t.Fatalf("Execution %s/%s: spec.deployItemsCompressed: %v", ns, name, err)
	}
	list, err := k.Resource(lstest.GVRs["DeployItem"], ns).List(t.Context(), metav1.ListOptions{
		LabelSelector: "execution.landscaper.gardener.cloud/managed-by=" + name})
	if err != nil {
		t.Fatal(err)
	}
	realItems := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		di := &list.Items[i]
		realItems[di.GetLabels()["execution.landscaper.gardener.cloud/name"]] = di
	}
	var items []string
	for _, tmpl := range templates {
		item, _ := tmpl["name"].(string)
		if di := realItems[item]; di != nil {
			if ps, ok, _ := unstructured.NestedFieldCopy(di.Object, "status", "providerStatus"); ok {
				tmpl["providerStatus"] = ps
			}
		}
		b, err := json.Marshal(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, string(b))
	}

	// The Execution's owner, so that the garbage collector of the control
	// plane without controllers leaves the Execution there.
	inst := k.Get(lstest.GVRs["Installation"], ns, name)
	owner := c.ls.WriteObject(map[string]any{"apiVersion": inst.GetAPIVersion(), "kind": inst.GetKind(),
		"metadata": map[string]any{"name": name, "namespace": fakeNS}, "spec": inst.Object["spec"]})
	in := &lstest.Cluster{T: t, D: c.d, Namespace: fakeNS}
	names := in.Execution(name, owner.GetUID(), true, items...)

	compare := func(what string, ls, fake *unstructured.Unstructured) {
		t.Helper()
		r, f := shape(ls.Object), shape(fake.Object)
		for _, p := range slices.Sorted(maps.Keys(r)) {
			if !f[p] && lstestOmitted(p) == "" {
				t.Errorf("%s: Landscaper writes %s, lstest does not", what, p)
			}
		}
		for _, p := range slices.Sorted(maps.Keys(f)) {
			if !r[p] {
				t.Errorf("%s: lstest writes %s, Landscaper does not", what, p)
			}
		}
	}
	compare("Execution "+name, exec, c.get("Execution", fakeNS, name))
	for item, di := range realItems {
		generated := regexp.MustCompile("^" + regexp.QuoteMeta(name+"-"+item+"-") + "[bcdfghjklmnpqrstvwxz2456789]{5}$")
		for who, n := range map[string]string{"Landscaper": di.GetName(), "lstest": names[item]} {
			if !generated.MatchString(n) {
				t.Errorf("%s names the DeployItem of %s/%s %q, not <execution>-<item>-<5 random>", who, name, item, n)
			}
		}
		if names[item] != "" {
			compare("DeployItem of "+item, di, c.get("DeployItem", fakeNS, names[item]))
		}
	}
}

func lstestOmitted(path string) string {
	for p, why := range lstestOmits {
		if path == p || strings.HasPrefix(path, p+".") || strings.HasPrefix(path, p+"[]") {
			return why
		}
	}
	return ""
}

// shape is the set of paths of obj's leaves that a fixture must have:
// what the API server sets aside, the item's config and provider status
// counted as present, lists by their elements' paths ("[]").
func shape(obj map[string]any) map[string]bool {
	out := map[string]bool{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch path {
		case "metadata.uid", "metadata.resourceVersion", "metadata.creationTimestamp", "metadata.generation",
			"metadata.managedFields", "metadata.name", "metadata.namespace", "metadata.ownerReferences[].uid",
			"spec.config", "status.providerStatus", "spec.deployItemsCompressed":
			out[path] = true
			return
		}
		switch v := v.(type) {
		case map[string]any:
			if len(v) == 0 {
				out[path] = true
			}
			for key, e := range v {
				walk(strings.TrimPrefix(path+"."+key, "."), e)
			}
		case []any:
			for _, e := range v {
				walk(path+"[]", e)
			}
		default:
			out[path] = true
		}
	}
	walk("", obj)
	return out
}

func gunzipBase64(t *testing.T, s string) []byte {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(fmt.Errorf("gzip: %w", err))
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
