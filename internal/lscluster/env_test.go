//go:build unix

package lscluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/testenv"
)

// The tests read a real API server (internal/testenv) with Landscaper's own
// CRDs (testdata/crds) and objects written as Landscaper and its guided
// tour write them. No Landscaper controller runs: the tests write the
// objects its controllers would have written.

var (
	env *testenv.Env
	// bareErr is what Read said about the API server before the CRDs were
	// installed: the one moment this package's cluster is not a Landscaper
	// cluster.
	bareErr error
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	e, err := testenv.Start(ctx, testenv.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: testenv: %v\n", err)
		return 1
	}
	env = e
	defer func() {
		if err := e.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: stop: %v\n", err)
		}
	}()
	r, err := New(restConfig())
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		return 1
	}
	_, bareErr = r.Read(ctx, "default", "hello-world")
	if err := installCRDs(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: installing Landscaper's CRDs: %v\n", err)
		return 1
	}
	return m.Run()
}

func restConfig() *rest.Config {
	rc, err := clientcmd.RESTConfigFromKubeConfig([]byte(env.Kubeconfig()))
	if err != nil {
		panic(err)
	}
	return rc
}

func dyn() dynamic.Interface {
	rc := restConfig()
	rc.QPS, rc.Burst = 1000, 1000 // the tests write many objects
	d, err := dynamic.NewForConfig(rc)
	if err != nil {
		panic(err)
	}
	return d
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

func installCRDs(ctx context.Context) error {
	files, err := filepath.Glob("testdata/crds/*.yaml")
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs in testdata/crds: %v", err)
	}
	d := dyn()
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		u := &unstructured.Unstructured{Object: obj}
		if _, err := d.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		names = append(names, u.GetName())
	}
	for _, name := range names {
		for {
			u, err := d.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			established := false
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					established = true
				}
			}
			if established {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("CRD %s not established: %w", name, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

var nsSeq atomic.Int64

// cluster is one test's namespace of the Landscaper cluster.
type cluster struct {
	t  testing.TB
	ns string
	d  dynamic.Interface
}

func newCluster(t testing.TB) *cluster {
	t.Helper()
	c := &cluster{t: t, ns: fmt.Sprintf("cu-example-%d", nsSeq.Add(1)), d: dyn()}
	c.write(fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", c.ns))
	return c
}

var gvrOfKind = map[string]schema.GroupVersionResource{
	"Namespace":    {Version: "v1", Resource: "namespaces"},
	"Secret":       secretsGVR,
	"ConfigMap":    configMapsGVR,
	"Installation": installationsGVR,
	"Target":       targetsGVR,
	"DataObject":   dataObjectsGVR,
	"Context":      contextsGVR,
	"Execution":    executionsGVR,
	"DeployItem":   deployItemsGVR,

	"ComponentVersionOverwrites": overwritesGVR,
}

// write creates the object the YAML describes (in the test's namespace
// unless it names one), then its status, as Landscaper's controllers write
// status through the status subresource. ${namespace} is replaced as in the
// guided tour's templates. It returns the object's UID.
func (c *cluster) write(text string) string {
	c.t.Helper()
	text = strings.ReplaceAll(text, "${namespace}", c.ns)
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
		c.t.Fatalf("test object: %v\n%s", err, text)
	}
	u := &unstructured.Unstructured{Object: obj}
	gvr, ok := gvrOfKind[u.GetKind()]
	if !ok {
		c.t.Fatalf("test object of unknown kind %q", u.GetKind())
	}
	status, hasStatus := obj["status"]
	delete(obj, "status")
	var ri dynamic.ResourceInterface = c.d.Resource(gvr)
	if u.GetKind() != "Namespace" {
		if u.GetNamespace() == "" {
			u.SetNamespace(c.ns)
		}
		ri = c.d.Resource(gvr).Namespace(u.GetNamespace())
	}
	created, err := ri.Create(c.t.Context(), u, metav1.CreateOptions{})
	if err != nil {
		c.t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	if hasStatus {
		created.Object["status"] = status
		if created, err = ri.UpdateStatus(c.t.Context(), created, metav1.UpdateOptions{}); err != nil {
			c.t.Fatalf("writing the status of %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	return string(created.GetUID())
}

// remove deletes an object, as a user who deleted it by mistake.
func (c *cluster) remove(kind, name string) {
	c.t.Helper()
	if err := c.d.Resource(gvrOfKind[kind]).Namespace(c.ns).Delete(c.t.Context(), name, metav1.DeleteOptions{}); err != nil {
		c.t.Fatalf("deleting %s %s: %v", kind, name, err)
	}
}

func (c *cluster) read(name string) (*Installation, error) {
	c.t.Helper()
	r, err := New(restConfig())
	if err != nil {
		c.t.Fatal(err)
	}
	return r.Read(c.t.Context(), c.ns, name)
}

func (c *cluster) mustRead(name string) *Installation {
	c.t.Helper()
	inst, err := c.read(name)
	if err != nil {
		c.t.Fatalf("Read(%s/%s): %v", c.ns, name, err)
	}
	return inst
}

// The kubeconfig of the guided tour's Target; the tests check it never
// shows up in what the reader returns.
const targetKubeconfig = "apiVersion: v1\nkind: Config\nclusters:\n- name: shoot\n  cluster:\n    server: https://shoot.example.invalid\nusers:\n- name: admin\n  user:\n    token: target-token-do-not-leak\n"

func targetYAML(name string) string {
	return fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Target
metadata:
  name: %s
  namespace: ${namespace}
spec:
  type: landscaper.gardener.cloud/kubernetes-cluster
  config:
    kubeconfig: |
%s`, name, indent(targetKubeconfig, "      "))
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

func yamlToJSON(s string) ([]byte, error) { return yaml.YAMLToJSON([]byte(s)) }
