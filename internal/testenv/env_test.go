//go:build unix

package testenv_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashHelperEnv); dir != "" {
		crashHelper(dir)
	}
	os.Exit(testenv.Main(m, &env))
}

// waitFor bounds polls for controller work; generous, since the machine is
// shared and this is about correctness, not speed.
const waitFor = 90 * time.Second

// do sends a JSON request to the API server and returns status and body.
func do(t *testing.T, c *http.Client, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, env.Host()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// must sends a request and fails the test unless the status is want.
func must(t *testing.T, want int, method, path string, body any) map[string]any {
	t.Helper()
	status, data := do(t, env.HTTPClient(), method, path, body)
	if status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, data)
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return obj
}

// eventually polls GET path until it answers want.
func eventually(t *testing.T, path string, want int) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		status, data := do(t, env.HTTPClient(), http.MethodGet, path, nil)
		if status == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: still %d after %s, want %d: %s", path, status, waitFor, want, data)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func namespace(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}
}

func configMap(name string, meta map[string]any) map[string]any {
	if meta == nil {
		meta = map[string]any{}
	}
	meta["name"] = name
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": map[string]any{"k": name}}
}

func uid(t *testing.T, obj map[string]any) string {
	t.Helper()
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		t.Fatalf("no metadata in %v", obj)
	}
	u, ok := meta["uid"].(string)
	if !ok || u == "" {
		t.Fatalf("no uid in %v", meta)
	}
	return u
}

// TestNamespaceDeletion needs the namespace controller: without it a
// deleted namespace stays Terminating forever. The default service account
// proves the serviceaccount controller runs.
func TestNamespaceDeletion(t *testing.T) {
	must(t, http.StatusCreated, http.MethodPost, "/api/v1/namespaces", namespace("ns-delete"))
	must(t, http.StatusCreated, http.MethodPost, "/api/v1/namespaces/ns-delete/configmaps", configMap("cm", nil))
	eventually(t, "/api/v1/namespaces/ns-delete/serviceaccounts/default", http.StatusOK)

	must(t, http.StatusOK, http.MethodDelete, "/api/v1/namespaces/ns-delete", nil)
	eventually(t, "/api/v1/namespaces/ns-delete", http.StatusNotFound)
}

// TestMetricSum counts the API server's answers: three LISTs of one
// namespace's Secrets add (at least, as the controller manager may list
// too) three to the samples that match, and a label no sample has matches
// nothing.
func TestMetricSum(t *testing.T) {
	must(t, http.StatusCreated, http.MethodPost, "/api/v1/namespaces", namespace("metrics"))
	lists := func() float64 {
		t.Helper()
		n, err := env.MetricSum(t.Context(), "apiserver_request_total", `resource="secrets"`, `verb="LIST"`)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := lists()
	for range 3 {
		must(t, http.StatusOK, http.MethodGet, "/api/v1/namespaces/metrics/secrets", nil)
	}
	if after := lists(); after-before < 3 {
		t.Errorf("LISTs of Secrets %v -> %v, want 3 more", before, after)
	}
	if n, err := env.MetricSum(t.Context(), "apiserver_request_total", `resource="secrets"`, `verb="NO-SUCH-VERB"`); err != nil || n != 0 {
		t.Errorf("a verb never used: %v, %v", n, err)
	}
}

// TestGarbageCollection needs the garbagecollector controller, for both
// propagation policies a deleter may choose.
func TestGarbageCollection(t *testing.T) {
	must(t, http.StatusCreated, http.MethodPost, "/api/v1/namespaces", namespace("gc"))
	for _, policy := range []string{"Background", "Foreground"} {
		t.Run(policy, func(t *testing.T) {
			owner, child := "owner-"+strings.ToLower(policy), "child-"+strings.ToLower(policy)
			base := "/api/v1/namespaces/gc/configmaps"
			created := must(t, http.StatusCreated, http.MethodPost, base, configMap(owner, nil))
			ref := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "uid": uid(t, created)}
			must(t, http.StatusCreated, http.MethodPost, base,
				configMap(child, map[string]any{"ownerReferences": []any{ref}}))

			opts := map[string]any{"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": policy}
			status, data := do(t, env.HTTPClient(), http.MethodDelete, base+"/"+owner, opts)
			if status != http.StatusOK && status != http.StatusAccepted {
				t.Fatalf("delete owner: %d: %s", status, data)
			}
			eventually(t, base+"/"+child, http.StatusNotFound)
			eventually(t, base+"/"+owner, http.StatusNotFound)
		})
	}
}

// TestAPIServerRestart stops the API server, sees requests fail, starts it
// again on the same address and finds the data etcd kept.
func TestAPIServerRestart(t *testing.T) {
	must(t, http.StatusCreated, http.MethodPost, "/api/v1/namespaces", namespace("restart"))
	must(t, http.StatusCreated, http.MethodPost, "/api/v1/namespaces/restart/configmaps", configMap("kept", nil))

	start := time.Now()
	if err := env.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	t.Logf("StopAPIServer took %s", time.Since(start).Round(time.Millisecond))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, env.Host()+"/readyz", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := env.HTTPClient().Do(req); err == nil {
		_ = resp.Body.Close()
		t.Fatalf("API server still answers after StopAPIServer: %s", resp.Status)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	start = time.Now()
	if err := env.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("StartAPIServer took %s", time.Since(start).Round(time.Millisecond))
	cm := must(t, http.StatusOK, http.MethodGet, "/api/v1/namespaces/restart/configmaps/kept", nil)
	if data, _ := cm["data"].(map[string]any); data["k"] != "kept" {
		t.Fatalf("configmap after restart: %v", cm)
	}

	// The controllers reconnect too: a namespace deleted now still goes.
	must(t, http.StatusOK, http.MethodDelete, "/api/v1/namespaces/restart", nil)
	eventually(t, "/api/v1/namespaces/restart", http.StatusNotFound)
}

// TestCredentials checks that the kubeconfig alone, and the token alone,
// are enough to act as a cluster admin.
func TestCredentials(t *testing.T) {
	var kc struct {
		Clusters []struct {
			Cluster struct {
				Server string `json:"server"`
				CA     string `json:"certificate-authority-data"`
			} `json:"cluster"`
		} `json:"clusters"`
		Users []struct {
			User struct {
				Cert string `json:"client-certificate-data"`
				Key  string `json:"client-key-data"`
			} `json:"user"`
		} `json:"users"`
		CurrentContext string `json:"current-context"`
	}
	if err := yaml.Unmarshal([]byte(env.Kubeconfig()), &kc); err != nil {
		t.Fatal(err)
	}
	fromFile, err := os.ReadFile(env.KubeconfigPath())
	if err != nil || string(fromFile) != env.Kubeconfig() {
		t.Fatalf("KubeconfigPath does not hold Kubeconfig (err %v)", err)
	}
	if len(kc.Clusters) != 1 || len(kc.Users) != 1 || kc.CurrentContext == "" {
		t.Fatalf("kubeconfig shape: %+v", kc)
	}
	if got := kc.Clusters[0].Cluster.Server; got != env.Host() {
		t.Fatalf("server %q, want %q", got, env.Host())
	}
	decode := func(s string) []byte {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ca := decode(kc.Clusters[0].Cluster.CA)
	if !bytes.Equal(ca, env.CAData()) {
		t.Fatal("kubeconfig CA differs from CAData")
	}
	certPEM, keyPEM := decode(kc.Users[0].User.Cert), decode(kc.Users[0].User.Key)
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatal("client certificate is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if len(cert.Subject.Organization) != 1 || cert.Subject.Organization[0] != "system:masters" {
		t.Fatalf("client certificate groups %v, want [system:masters]", cert.Subject.Organization)
	}

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]*http.Client{
		"kubeconfig": {Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}}},
		"token":      {Transport: bearer{token: env.Token(), base: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}},
		"anonymous":  {Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}},
	}
	for _, tc := range []struct {
		client string
		want   int
	}{
		{"kubeconfig", http.StatusOK},
		{"token", http.StatusOK},
		{"anonymous", http.StatusForbidden},
	} {
		t.Run(tc.client, func(t *testing.T) {
			// Listing cluster roles takes more than the discovery rights
			// every authenticated user has.
			status, data := do(t, clients[tc.client], http.MethodGet, "/apis/rbac.authorization.k8s.io/v1/clusterroles", nil)
			if status != tc.want {
				t.Fatalf("status %d, want %d: %s", status, tc.want, data)
			}
		})
	}
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", fmt.Sprintf("Bearer %s", b.token))
	return b.base.RoundTrip(r)
}
