//go:build unix

package helm

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// installAsLandscaper installs the demo chart as Landscaper's helm
// deployer does: helm's install action with the release name and
// namespace of the config, createNamespace, releases in Secrets.
func installAsLandscaper(t *testing.T, tgt *deployer.Target, ns, name string, values map[string]any) {
	t.Helper()
	cl, err := target.ClusterFor(tgt.Config)
	if err != nil {
		t.Fatal(err)
	}
	ac, err := New(Options{}).actionConfig(cl.Config, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := loader.LoadArchive(bytes.NewReader(helmtest.Archive(t, helmtest.Demo, "")))
	if err != nil {
		t.Fatal(err)
	}
	in := action.NewInstall(ac)
	in.ReleaseName, in.Namespace, in.CreateNamespace, in.Timeout = name, ns, true, time.Minute
	if _, err := in.Run(ch, values); err != nil {
		t.Fatal(err)
	}
}

// The first run of an item imported from a Landscaper DeployItem upgrades
// the release Landscaper installed, in place: one revision more, the same
// objects. It never installs a release, not even when the one to adopt is
// gone or the config names another.
func TestAdoptionUpgradesTheReleaseInPlace(t *testing.T) {
	tgt, cs := cluster(t)
	ns, name := "helm-adopt", "hello"
	installAsLandscaper(t, tgt, ns, name, map[string]any{"message": "from-landscaper"})
	before := helmtest.DemoUIDs(t, cs, ns, name)
	config := func(release, message string) []byte {
		return mustJSON(t, map[string]any{
			"apiVersion": APIVersion, "kind": Kind, "name": release, "namespace": ns, "createNamespace": true,
			"chart":  map[string]any{"archive": map[string]any{"raw": helmtest.ArchiveBase64(t, helmtest.Demo, "")}},
			"values": map[string]any{"message": message},
		})
	}
	adopt := &deployer.Adoption{DeployItem: "hello-world-di-h3lm", Release: &deployer.ObjectRef{Namespace: ns, Name: name}}
	d := New(Options{PollInterval: 100 * time.Millisecond})

	_, err := run(t, d, core.OperationReconcile, deployer.Request{Execution: "e", Item: "renamed", Target: tgt,
		Config: config("hello-renamed", "x"), Adopt: adopt})
	if ce, ok := err.(*core.Error); !ok || !strings.Contains(ce.Message, "names release helm-adopt/hello-renamed") { //nolint:errorlint // returned unwrapped
		t.Fatalf("adopting under another release name: %v", err)
	}
	missing := &deployer.Adoption{DeployItem: "gone-di", Release: &deployer.ObjectRef{Namespace: ns, Name: "gone"}}
	_, err = run(t, d, core.OperationReconcile, deployer.Request{Execution: "e", Item: "gone", Target: tgt,
		Config: config("gone", "x"), Adopt: missing})
	if ce, ok := err.(*core.Error); !ok || ce.Transient || !strings.Contains(ce.Message, "helm release helm-adopt/gone, which Landscaper's DeployItem gone-di installed, is not there") { //nolint:errorlint // returned unwrapped
		t.Fatalf("adopting a release that is gone: %v", err)
	}
	for _, n := range []string{"hello-renamed", "gone"} {
		if got := helmtest.History(t, cs, ns, n); len(got) != 0 {
			t.Fatalf("a release %s was installed: %v", n, got)
		}
	}

	req := deployer.Request{Execution: "e", Item: "hello", Target: tgt, Config: config(name, "from-terraform"), Adopt: adopt}
	res, err := run(t, d, core.OperationReconcile, req)
	if err != nil {
		t.Fatal(err)
	}
	var ps ProviderStatus
	mustUnmarshal(t, res.ProviderStatus, &ps)
	if ps.Release == nil || ps.Release.Revision != 2 {
		t.Fatalf("provider status %s, want revision 2", res.ProviderStatus)
	}
	if got := strings.Join(helmtest.History(t, cs, ns, name), ","); !strings.Contains(got, "1:superseded") || !strings.Contains(got, "2:deployed") || strings.Count(got, ":") != 2 {
		t.Fatalf("release history %s, want Landscaper's revision 1 superseded by 2", got)
	}
	if after := helmtest.DemoUIDs(t, cs, ns, name); after != before {
		t.Fatalf("objects re-created: UIDs %v, were %v", after, before)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(t.Context(), name+"-config", metav1.GetOptions{})
	if err != nil || cm.Data["message"] != "from-terraform" {
		t.Fatalf("config map after the upgrade: %v %v", cm.Data, err)
	}
	if drift, err := d.Drift(t.Context(), req, res); err != nil || drift != "" {
		t.Fatalf("drift right after adoption: %q %v", drift, err)
	}
}

// helmDeployment: false items take over the objects Landscaper's helm
// deployer applied, as manifest items do: in place, relabelled, and what
// the chart no longer renders deleted.
func TestAdoptionOfRenderedObjects(t *testing.T) {
	tgt, cs := cluster(t)
	ns, name := "hm-adopt", "adopted"
	const di = "hello-world-di-m4n1"
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labelled := metav1.ObjectMeta{Namespace: ns, Labels: map[string]string{ManagedDeployItemLabel: di}}
	mk := func(n string) string {
		m := labelled
		m.Name = n
		cm, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: m, Data: map[string]string{"message": "old"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return string(cm.UID)
	}
	cmUID, extraUID := mk(name+"-config"), mk(name+"-extra")
	m := labelled
	m.Name = name + "-secret"
	sec, err := cs.CoreV1().Secrets(ns).Create(t.Context(), &corev1.Secret{ObjectMeta: m, StringData: map[string]string{"token": "old"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	adopt := &deployer.Adoption{DeployItem: di, Objects: []deployer.ObjectRef{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: name + "-config"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: name + "-extra"},
		{APIVersion: "v1", Kind: "Secret", Namespace: ns, Name: name + "-secret"},
	}}
	d := New(Options{})
	req := deployer.Request{Execution: "e", Item: "adopted", JobID: "j1", Target: tgt, Adopt: adopt,
		Config: manifestConfig(t, ns, name, map[string]any{"message": "new", "extra": false}, nil)}
	if _, err := run(t, d, core.OperationReconcile, req); err != nil {
		t.Fatal(err)
	}
	owner := kube.OwnerFor("e", "adopted")
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(t.Context(), name+"-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := cs.CoreV1().Secrets(ns).Get(t.Context(), name+"-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(cm.UID) != cmUID || string(s.UID) != string(sec.UID) {
		t.Fatalf("objects re-created")
	}
	if cm.Labels[ManagedDeployItemLabel] != owner || s.Labels[ManagedDeployItemLabel] != owner || cm.Data["message"] != "new" {
		t.Fatalf("after adoption: config map %v %v, secret %v", cm.Labels, cm.Data, s.Labels)
	}
	if configMapExists(t, cs, ns, name+"-extra") {
		t.Fatalf("%s-extra (UID %s): the DeployItem's, no longer rendered, still exists", name, extraUID)
	}
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}
