package target

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"k8s.io/klog/v2"
)

const secret = "tok3n-value"

func kubeconfig(extra string) string {
	return "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: https://127.0.0.1:6443}\nusers:\n- name: u\n  user: {token: " + secret + "}\n" + extra
}

func cfg(t *testing.T, kc string) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(map[string]string{"kubeconfig": kc})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCheckKubernetesCluster(t *testing.T) {
	good := map[string]string{
		"no context":               kubeconfig(""),
		"with context":             kubeconfig("contexts:\n- name: x\n  context: {cluster: c, user: u, namespace: ns1}\ncurrent-context: x\n"),
		"one context, not current": kubeconfig("contexts:\n- name: x\n  context: {cluster: c, user: u}\n"),
	}
	for name, kc := range good {
		if err := CheckKubernetesCluster(cfg(t, kc)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	bad := map[string]string{
		`{}`:                             `no "kubeconfig"`,
		`{"kubeconfig": 3}`:              "must be a string",
		`{"kubeconfig": "a: [", "x": 1}`: "one field",
		`{"kubeconfig": "users: []"}`:    "names no cluster",
		`{"kubeconfig": "{{"}`:           "not a valid kubeconfig",
		`[1]`:                            "one field",
		string(cfg(t, kubeconfig("contexts:\n- name: x\n  context: {cluster: missing, user: u}\ncurrent-context: x\n"))):                       "invalid",
		string(cfg(t, kubeconfig("contexts:\n- name: x\n  context: {cluster: c, user: u}\n- name: ctx2\n  context: {cluster: c, user: u}\n"))): "cannot be used",
	}
	for c, want := range bad {
		err := CheckKubernetesCluster(json.RawMessage(c))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", c, err, want)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("error quotes the config: %v", err)
		}
	}
	withSecret, _ := json.Marshal(map[string]any{"kubeconfig": kubeconfig(""), "token": secret})
	if err := CheckKubernetesCluster(withSecret); err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("error must not quote the config: %v", err)
	}
}

func TestRESTConfig(t *testing.T) {
	rc, err := RESTConfig(cfg(t, kubeconfig("")))
	if err != nil {
		t.Fatal(err)
	}
	if rc.Host != "https://127.0.0.1:6443" || rc.BearerToken != secret {
		t.Errorf("host %q, token set %v", rc.Host, rc.BearerToken != "")
	}
	// No client-side limit by default: client-go reads a negative QPS as
	// none (0 would be its default of 5).
	if rc.QPS >= 0 {
		t.Errorf("QPS/Burst = %v/%v, want no client-side limit", rc.QPS, rc.Burst)
	}
	if rc.WarningHandler == nil {
		t.Error("API warnings would go to stderr")
	}
}

// A limit set for the provider reaches new clients, and a client made
// under another limit is not reused.
func TestRateLimit(t *testing.T) {
	t.Cleanup(func() { SetRateLimit(RateLimit{}) })
	config := cfg(t, kubeconfig(""))
	unlimited, err := ClusterFor(config)
	if err != nil {
		t.Fatal(err)
	}
	SetRateLimit(RateLimit{QPS: 20})
	rc, err := RESTConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	if rc.QPS != 20 || rc.Burst != 1 {
		t.Errorf("QPS/Burst = %v/%v, want 20/1", rc.QPS, rc.Burst)
	}
	limited, err := ClusterFor(config)
	if err != nil {
		t.Fatal(err)
	}
	if limited == unlimited || limited.Config.QPS != 20 {
		t.Errorf("the unlimited client was reused under a limit (QPS %v)", limited.Config.QPS)
	}
	SetRateLimit(RateLimit{})
	if again, _ := ClusterFor(config); again != unlimited {
		t.Error("the unlimited client was not reused")
	}
}

func TestDefaultNamespace(t *testing.T) {
	cases := map[string]string{
		kubeconfig(""): "default",
		kubeconfig("contexts:\n- name: x\n  context: {cluster: c, user: u, namespace: ns1}\ncurrent-context: x\n"): "ns1",
		"not a kubeconfig": "default",
	}
	for kc, want := range cases {
		if got := DefaultNamespace(cfg(t, kc)); got != want {
			t.Errorf("%q: %q, want %q", kc, got, want)
		}
	}
}

func TestClusterForSharesClients(t *testing.T) {
	a, err := ClusterFor(cfg(t, kubeconfig("")))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ClusterFor(cfg(t, kubeconfig("")))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ClusterFor(cfg(t, kubeconfig("preferences: {}\n")))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("identical configs must share one client")
	}
	if a == c {
		t.Error("different configs must not share a client")
	}
	if _, err := ClusterFor(json.RawMessage(`{}`)); err == nil {
		t.Error("invalid config accepted")
	}
}

func TestClusterCacheIsBounded(t *testing.T) {
	for i := range maxClusters + 5 {
		if _, err := ClusterFor(cfg(t, kubeconfig(strings.Repeat("\n", i+10)))); err != nil {
			t.Fatal(err)
		}
	}
	clusters.Lock()
	n := len(clusters.byKey)
	clusters.Unlock()
	if n > maxClusters {
		t.Errorf("%d clients cached, bound is %d", n, maxClusters)
	}
}

func TestKlogGoesToLoggerAtDebugOnly(t *testing.T) {
	var buf bytes.Buffer
	l := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Debug})
	SetLogger(l)
	defer SetLogger(hclog.NewNullLogger())

	klog.Background().Info("from client-go", "k", "v")
	klog.Background().V(2).Info("verbose but allowed")
	klog.Background().Error(errors.New("boom"), "failed")
	sink := &klogSink{}
	sink.Info(maxKlogVerbosity+2, "request body with secret "+secret)
	warningHandler{}.HandleWarningHeader(299, "", "deprecated API")

	out := buf.String()
	for _, want := range []string{"[DEBUG] from client-go: k=v", "failed: error=boom", "API server warning: warning=\"deprecated API\""} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, secret) {
		t.Errorf("high-verbosity client-go output was logged:\n%s", out)
	}
	if strings.Contains(out, "[INFO]") || strings.Contains(out, "[ERROR]") {
		t.Errorf("client-go output must be DEBUG only:\n%s", out)
	}

	buf.Reset()
	SetLogger(hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Info}))
	klog.Background().Info("hidden")
	if buf.Len() != 0 {
		t.Errorf("DEBUG output written at INFO level: %s", buf.String())
	}
}

// A Landscaper self target is refused by name, with why and what to use
// instead, not as a config of the wrong shape.
func TestSelfTargetIsRefusedByName(t *testing.T) {
	err := CheckKubernetesCluster([]byte(`{"selfConfig": {"serviceAccount": {"name": "self"}, "expirationSeconds": 3600}}`))
	if !errors.Is(err, ErrSelfTarget) {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{`"selfConfig"`, "resource cluster", "kubeconfig", "kubectl create token"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the message does not say %q: %v", want, err)
		}
	}
}

// A kubeconfig's pointing does not depend on the order its clusters,
// contexts and users come in (Go maps, once parsed), nor on its
// credentials; it does on everything else.
func TestKubernetesClusterPointing(t *testing.T) {
	entries := func(order []int, token string) string {
		var clusters, contexts, users string
		for _, i := range order {
			n := string(rune('a' + i))
			clusters += "- name: " + n + "\n  cluster: {server: 'https://" + n + ".example', proxy-url: 'http://u:" + token + "@proxy'}\n"
			contexts += "- name: " + n + "\n  context: {cluster: " + n + ", user: " + n + "}\n"
			users += "- name: " + n + "\n  user: {token: " + token + n + "}\n"
		}
		return "apiVersion: v1\nkind: Config\ncurrent-context: a\nclusters:\n" + clusters + "contexts:\n" + contexts + "users:\n" + users
	}
	want := KubernetesClusterPointing(cfg(t, entries([]int{0, 1, 2, 3}, "one")))
	if want == "" {
		t.Fatal("no pointing")
	}
	for range 20 {
		if got := KubernetesClusterPointing(cfg(t, entries([]int{3, 1, 0, 2}, "two"))); got != want {
			t.Fatalf("the same kubeconfig, other order and credentials: %s, want %s", got, want)
		}
	}
	if got := KubernetesClusterPointing(cfg(t, strings.Replace(entries([]int{0, 1, 2, 3}, "one"), "b.example", "x.example", 1))); got == want {
		t.Error("another server of a context points the same")
	}
	withUser := func(password string) json.RawMessage {
		return cfg(t, strings.Replace(entries([]int{0, 1, 2, 3}, "one"), "https://a.example", "https://admin:"+password+"@a.example", 1))
	}
	if a, b := KubernetesClusterPointing(withUser("pw-1")), KubernetesClusterPointing(withUser("pw-2")); a != b || a == "" {
		t.Error("another password in the server's URL points elsewhere")
	}
	if got := KubernetesClusterPointing(json.RawMessage(`{"kubeconfig":"not a kubeconfig"}`)); got != "" {
		t.Errorf("an unreadable config points at %q", got)
	}
}
