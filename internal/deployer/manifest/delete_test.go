//go:build unix

package manifest

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// requestLog records the method and path of each request a cluster
// client sends.
type requestLog struct {
	mu   sync.Mutex
	reqs []string
	next http.RoundTripper
}

func (l *requestLog) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.reqs = append(l.reqs, r.Method+" "+r.URL.Path)
	l.mu.Unlock()
	return l.next.RoundTrip(r)
}

func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.reqs
	l.reqs = nil
	return out
}

// countingCluster is a client of the test API server whose requests are
// recorded, with discovery already warm so only object requests remain.
func countingCluster(t *testing.T) (*target.Cluster, *requestLog) {
	t.Helper()
	rc, err := target.RESTConfig(targetConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	log := &requestLog{}
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { log.next = rt; return log })
	cl, err := target.NewClusterForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	for _, gvk := range []schema.GroupVersionKind{cmGVK, podGVK} {
		if _, err := cl.Mapping(gvk); err != nil {
			t.Fatal(err)
		}
	}
	log.take()
	return cl, log
}

var podGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}

func managedRef(gvk schema.GroupVersionKind, ns, name string) kube.ManagedResourceStatus {
	return kube.ManagedResourceStatus{Policy: kube.PolicyManage, Resource: corev1.ObjectReference{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: ns, Name: name}}
}

// Deleting an object that goes at once costs one request: the DELETE's
// answer says it is gone. Objects held up by a finalizer or a grace period
// are still waited for, and a deletion group does not start before the
// previous one is gone.
func TestDeleteTellsGoneFromTheAnswer(t *testing.T) {
	ns := namespace(t)
	for _, n := range []string{"a", "b", "c"} {
		create(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+n+", namespace: "+ns+"}\n")
	}
	cl, log := countingCluster(t)
	ctx := context.Background()
	plain := kube.ManagedResourceStatusList{managedRef(cmGVK, ns, "a"), managedRef(cmGVK, ns, "b"), managedRef(cmGVK, ns, "c")}
	rem, err := kube.DeleteManaged(ctx, cl, kube.DeleteOptions{}, plain)
	if err != nil || len(rem) != 0 {
		t.Fatalf("remaining %v, error %v", rem, err)
	}
	reqs := log.take()
	for _, r := range reqs {
		if !strings.HasPrefix(r, "DELETE ") {
			t.Errorf("request besides the DELETEs: %s (all: %q)", r, reqs)
		}
	}
	if len(reqs) != 3 {
		t.Errorf("requests %q, want the 3 DELETEs", reqs)
	}

	// A finalizer holds the object: the answer carries a deletionTimestamp.
	create(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held, namespace: "+ns+", finalizers: [test.landscaper/hold]}\n")
	// A Pod on a node deletes gracefully: without a kubelet it stays.
	create(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: graceful, namespace: "+ns+"}\nspec: {nodeName: nowhere, containers: [{name: c, image: x}]}\n")
	create(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: later, namespace: "+ns+"}\n")
	groups := []kube.DeletionGroupDefinition{
		{CustomResourceGroup: &kube.CustomResourceGroup{Resources: []kube.ResourceType{{APIVersion: "v1", Kind: "ConfigMap", Names: []string{"held"}}, {APIVersion: "v1", Kind: "Pod"}}}},
		{PredefinedResourceGroup: &kube.PredefinedResourceGroup{Type: kube.GroupNamespacedResources}},
	}
	held := kube.ManagedResourceStatusList{managedRef(cmGVK, ns, "held"), managedRef(podGVK, ns, "graceful"), managedRef(cmGVK, ns, "later")}
	for round := range 2 { // the second round is a repeated DELETE of objects already being deleted
		rem, err = kube.DeleteManaged(ctx, cl, kube.DeleteOptions{Groups: groups, Settle: 1}, held)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, mr := range rem {
			names = append(names, mr.Resource.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"graceful", "held", "later"}) {
			t.Fatalf("round %d: remaining %v, want graceful and held still being deleted, later not started", round, names)
		}
		if get(t, cmGVK, ns, "later") == nil {
			t.Fatalf("round %d: later was deleted before its group's turn", round)
		}
	}
	if p := mustGet(t, podGVK, ns, "graceful"); p.GetDeletionTimestamp() == nil {
		t.Error("the Pod is not being deleted")
	}
	log.take()

	h := mustGet(t, cmGVK, ns, "held")
	h.SetFinalizers(nil)
	update(t, h)
	zero := int64(0)
	pods, _, err := cl.Resource(podGVK, ns)
	if err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "graceful", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	rem, err = kube.DeleteManaged(ctx, cl, kube.DeleteOptions{Groups: groups}, held)
	if err != nil || len(rem) != 0 {
		t.Fatalf("after the finalizer and grace period: remaining %v, error %v", rem, err)
	}
	if get(t, cmGVK, ns, "later") != nil {
		t.Error("later was not deleted")
	}
}
