//go:build unix

package manifest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/testenv"
)

// The tests of this package run against a real API server (etcd,
// kube-apiserver and kube-controller-manager from internal/testenv); only
// the workload controllers are missing, so tests set the status of
// workloads themselves.

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

var seq atomic.Int64

// item is one deploy item driven the way the engine drives it.
type item struct {
	t      *testing.T
	d      *Deployer
	req    deployer.Request
	last   deployer.Result
	config string
}

func newItem(t *testing.T, configYAML string) *item {
	t.Helper()
	it := &item{t: t, d: New()}
	it.req = deployer.Request{
		Execution: "exec", Item: fmt.Sprintf("item%d", seq.Add(1)),
		Target: &deployer.Target{Name: "cluster", Type: target.KubernetesClusterType, Config: targetConfig(t)},
	}
	it.setConfig(configYAML)
	return it
}

func targetConfig(t *testing.T) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(map[string]string{"kubeconfig": env.Kubeconfig()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (it *item) setConfig(configYAML string) {
	it.t.Helper()
	js, err := yaml.YAMLToJSON([]byte(configYAML))
	if err != nil {
		it.t.Fatal(err)
	}
	if err := it.d.Validate(js); err != nil {
		it.t.Fatalf("config rejected: %v", err)
	}
	it.req.Config = js
	it.config = configYAML
}

// once runs one call of a new job (or of the current one when resume).
func (it *item) once(op core.Operation, resume bool) (deployer.Result, error) {
	it.t.Helper()
	if !resume {
		it.req.JobID = uuid.NewString()
	}
	it.req.Operation = op
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var res deployer.Result
	var err error
	if op == core.OperationDelete {
		res, err = it.d.Delete(ctx, it.req)
	} else {
		res, err = it.d.Reconcile(ctx, it.req)
	}
	it.req.State = res.State
	it.last = res
	return res, err
}

// run drives a new job to its end like the engine: transient errors and
// requeues are retried until the deadline.
func (it *item) run(op core.Operation) (deployer.Result, error) {
	it.t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	resume := false
	for {
		res, err := it.once(op, resume)
		resume = true
		var ce *core.Error
		switch {
		case err == nil && res.RequeueAfter <= 0:
			return res, nil
		case err == nil:
		case errors.As(err, &ce) && ce.Transient:
		default:
			return res, err
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("did not finish: requeue %v, last error %v", res.RequeueAfter, err)
		}
		time.Sleep(max(res.RequeueAfter, 100*time.Millisecond))
	}
}

func (it *item) mustReconcile() deployer.Result {
	it.t.Helper()
	res, err := it.run(core.OperationReconcile)
	if err != nil {
		it.t.Fatalf("reconcile: %v", err)
	}
	return res
}

func (it *item) mustDelete() {
	it.t.Helper()
	if _, err := it.run(core.OperationDelete); err != nil {
		it.t.Fatalf("delete: %v", err)
	}
}

func (it *item) drift() string {
	it.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := it.d.Drift(ctx, it.req, it.last)
	if err != nil {
		it.t.Fatalf("drift: %v", err)
	}
	return d
}

// cluster is a client for the tests' own reads and writes.
func cluster(t *testing.T) *target.Cluster {
	t.Helper()
	c, err := target.ClusterFor(targetConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var (
	cmGVK  = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	nsGVK  = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	depGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
)

func get(t *testing.T, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := cluster(t).Get(context.Background(), gvk, ns, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func mustGet(t *testing.T, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := get(t, gvk, ns, name)
	if u == nil {
		t.Fatalf("%s %s/%s does not exist", gvk.Kind, ns, name)
	}
	return u
}

func create(t *testing.T, yamlText string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	js, err := yaml.YAMLToJSON([]byte(yamlText))
	if err != nil {
		t.Fatal(err)
	}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	ri, _, err := cluster(t).Resource(u.GroupVersionKind(), u.GetNamespace())
	if err != nil {
		t.Fatal(err)
	}
	out, err := ri.Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func update(t *testing.T, u *unstructured.Unstructured, subresources ...string) {
	t.Helper()
	ri, _, err := cluster(t).Resource(u.GroupVersionKind(), u.GetNamespace())
	if err != nil {
		t.Fatal(err)
	}
	if len(subresources) > 0 {
		_, err = ri.UpdateStatus(context.Background(), u, metav1.UpdateOptions{})
	} else {
		_, err = ri.Update(context.Background(), u, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, gvk schema.GroupVersionKind, ns, name string) {
	t.Helper()
	ri, _, err := cluster(t).Resource(gvk, ns)
	if err != nil {
		t.Fatal(err)
	}
	if err := ri.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// namespace creates a fresh namespace for one test.
func namespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%s", seq.Add(1), strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")))
	if len(name) > 60 {
		name = name[:60]
	}
	name = strings.TrimRight(strings.ReplaceAll(name, "_", "-"), "-")
	create(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+name+"}\n")
	return name
}

func data(t *testing.T, u *unstructured.Unstructured) map[string]string {
	t.Helper()
	d, _, err := unstructured.NestedStringMap(u.Object, "data")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func status(t *testing.T, res deployer.Result) []map[string]any {
	t.Helper()
	var ps struct {
		APIVersion       string           `json:"apiVersion"`
		Kind             string           `json:"kind"`
		ManagedResources []map[string]any `json:"managedResources"`
	}
	if err := json.Unmarshal(res.ProviderStatus, &ps); err != nil {
		t.Fatal(err)
	}
	if ps.APIVersion != APIVersionV1alpha2 || ps.Kind != "ProviderStatus" {
		t.Errorf("provider status type %s %s", ps.APIVersion, ps.Kind)
	}
	return ps.ManagedResources
}

func managedNames(t *testing.T, res deployer.Result) []string {
	t.Helper()
	var out []string
	for _, mr := range status(t, res) {
		r, _ := mr["resource"].(map[string]any)
		out = append(out, fmt.Sprintf("%v/%v", r["kind"], r["name"]))
	}
	return out
}
