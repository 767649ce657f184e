//go:build unix

package manifest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

func (it *item) preview() map[string]string {
	it.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	changes, err := it.d.Preview(ctx, it.req)
	if err != nil {
		it.t.Fatalf("preview: %v", err)
	}
	out := map[string]string{}
	for _, c := range changes {
		out[c.Object] = c.Summary
	}
	return out
}

func expectChanges(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s:\n got  %s\n want %s", what, g, w)
	}
}

// A dry run tells, per object, what a Reconcile would do, and changes
// nothing: creates before the first run, unchanged after it, the changed
// fields of an edit (a Secret's by path only), deletes of objects the
// manifests dropped, and a create for an object whose namespace is one of
// the creates.
func TestPreviewTellsWhatAReconcileWouldDo(t *testing.T) {
	ns := namespace(t)
	secret := func(value string) string {
		return fmt.Sprintf(`
  - manifest:
      apiVersion: v1
      kind: Secret
      metadata: {name: creds, namespace: %s}
      stringData: {password: %s}`, ns, value)
	}
	newNS := ns + "-new"
	it := newItem(t, config("manifests:"+cm(ns, "a", "{k: v1}")+cm(ns, "b", "{k: v1}")+secret("hunter2")+`
  - manifest:
      apiVersion: v1
      kind: Namespace
      metadata: {name: `+newNS+`}`+cm(newNS, "c", "{k: v1}")))
	cmName := func(n, name string) string { return "v1 ConfigMap " + n + "/" + name }
	expectChanges(t, "before the first run", it.preview(), map[string]string{
		cmName(ns, "a"): "create", cmName(ns, "b"): "create", cmName(newNS, "c"): "create",
		"v1 Namespace " + newNS: "create", "v1 Secret " + ns + "/creds": "create",
	})
	if got := it.preview(); len(got) != 5 {
		t.Fatalf("a second dry run sees something the first one changed: %v", got)
	}
	it.mustReconcile()
	t.Cleanup(it.mustDelete)
	expectChanges(t, "after the run", it.preview(), map[string]string{
		cmName(ns, "a"): "unchanged", cmName(ns, "b"): "unchanged", cmName(newNS, "c"): "unchanged",
		"v1 Namespace " + newNS: "unchanged", "v1 Secret " + ns + "/creds": "unchanged",
	})
	it.setConfig(config("manifests:" + cm(ns, "a", "{k: v2, added: x}") + secret("s3cr3t-new") + `
  - manifest:
      apiVersion: v1
      kind: Namespace
      metadata: {name: ` + newNS + `}` + cm(newNS, "c", "{k: v1}")))
	got := it.preview()
	expectChanges(t, "after an edit", got, map[string]string{
		cmName(ns, "a"): "update: data.added, data.k", cmName(ns, "b"): "delete", cmName(newNS, "c"): "unchanged",
		"v1 Namespace " + newNS: "unchanged", "v1 Secret " + ns + "/creds": "update: data.password",
	})
	if b, _ := json.Marshal(got); strings.Contains(string(b), "s3cr3t") || strings.Contains(string(b), "hunter2") {
		t.Errorf("the dry run shows a secret's value: %s", b)
	}
	// Nothing was written: the cluster still holds the first run.
	it.setConfig(config("manifests:" + cm(ns, "a", "{k: v1}") + cm(ns, "b", "{k: v1}") + secret("hunter2") + `
  - manifest:
      apiVersion: v1
      kind: Namespace
      metadata: {name: ` + newNS + `}` + cm(newNS, "c", "{k: v1}")))
	for obj, c := range it.preview() {
		if c != "unchanged" {
			t.Errorf("%s: %s after dry runs only; want unchanged", obj, c)
		}
	}
}

// A cluster that does not answer is an error of the dry run, not a hang.
func TestPreviewOfAnUnreachableCluster(t *testing.T) {
	it := newItem(t, config("manifests:"+cm("default", "a", "{k: v}")))
	kc := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
	cfg, _ := json.Marshal(map[string]string{"kubeconfig": kc})
	it.req.Target = &deployer.Target{Name: "down", Type: target.KubernetesClusterType, Config: cfg}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := it.d.Preview(ctx, it.req); err == nil {
		t.Fatal("a dry run against an unreachable cluster succeeded")
	}
}
