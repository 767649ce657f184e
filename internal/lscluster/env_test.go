//go:build unix

package lscluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
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
	if err := lstest.InstallCRDs(ctx, dyn()); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: installing Landscaper's CRDs: %v\n", err)
		return 1
	}
	code := m.Run()
	if err := landscaper.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv with Landscaper: stop: %v\n", err)
	}
	return code
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

var nsSeq atomic.Int64

// cluster is one test's namespace of the Landscaper cluster.
type cluster struct {
	t  testing.TB
	ns string
	d  dynamic.Interface
	w  *lstest.Cluster
}

func newCluster(t testing.TB) *cluster {
	t.Helper()
	c := &cluster{t: t, ns: fmt.Sprintf("cu-example-%d", nsSeq.Add(1)), d: dyn()}
	c.w = &lstest.Cluster{T: t, D: c.d, Namespace: c.ns}
	c.write(fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", c.ns))
	return c
}

// write creates the object the YAML describes (lstest.Cluster.Write) and
// returns its UID.
func (c *cluster) write(text string) string {
	c.t.Helper()
	return string(c.w.Write(text).GetUID())
}

// remove deletes an object, as a user who deleted it by mistake.
func (c *cluster) remove(kind, name string) {
	c.t.Helper()
	if err := c.d.Resource(lstest.GVRs[kind]).Namespace(c.ns).Delete(c.t.Context(), name, metav1.DeleteOptions{}); err != nil {
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
