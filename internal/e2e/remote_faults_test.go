//go:build unix

package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// faultProxy is a plain-HTTP proxy in front of an API server, with the
// server's credentials: a request for which fail returns true is answered
// with a 500 instead, as a failing webhook or a dropped connection would
// answer it.
type faultProxy struct {
	// Kubeconfig reaches the API server through the proxy.
	Kubeconfig string
	fail       atomic.Pointer[func(*http.Request) bool]
}

func startFaultProxy(t *testing.T, kubeconfig string) *faultProxy {
	t.Helper()
	rc, err := clientcmd.RESTConfigFromKubeConfig([]byte(kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := rest.TransportFor(rc)
	if err != nil {
		t.Fatal(err)
	}
	up, err := url.Parse(rc.Host)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{}
	rp := httputil.NewSingleHostReverseProxy(up)
	rp.Transport = tr
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := p.fail.Load(); f != nil && (*f)(r) {
			http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected fault","code":500}`, http.StatusInternalServerError)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.Kubeconfig = fmt.Sprintf("apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n    server: %s\n"+
		"contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\nusers:\n- name: u\n  user: {}\n", srv.URL)
	return p
}

// failing makes the proxy answer the requests f picks with a 500; nil
// lets everything through again.
func (p *faultProxy) failing(f func(*http.Request) bool) {
	if f == nil {
		p.fail.Store(nil)
		return
	}
	p.fail.Store(&f)
}

// TestRemoteUnreconciledApplyPlansAnUpdate: an apply writes every object,
// then cannot set the reconcile annotation. Landscaper never starts a job
// for what was written, so the next plan must plan an update, not say the
// installation is in sync; that update runs it. Before, the state kept
// the last job's Succeeded status with the new objects' records, and the
// plan was empty (the second remote review's R6).
func TestRemoteUnreconciledApplyPlansAnUpdate(t *testing.T) {
	w, k, lsNS, appNS := remoteWorkspace(t, "remote-unreconciled")
	writeBlueprint(t, w, remoteDeploy)
	px := startFaultProxy(t, k.Kubeconfig)
	acctest.WriteFile(t, w.Path("kubeconfig"), px.Kubeconfig)

	w.Config(remoteConfig(lsNS, appNS, "Hello World", appConfig))
	w.Apply()

	px.failing(func(r *http.Request) bool {
		return r.Method == http.MethodPatch && strings.Contains(r.Header.Get("Content-Type"), "merge-patch") &&
			strings.Contains(r.URL.Path, "/installations/")
	})
	w.Config(remoteConfig(lsNS, appNS, "Howdy", appConfig))
	if out, code := w.Run(nil, "apply", "-input=false", "-no-color", "-auto-approve"); code == 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), "injected fault") {
		t.Fatalf("apply with the reconcile annotation failing: exit %d, want a failure naming the fault:\n%s", code, out)
	}
	px.failing(nil)
	if k.exists(configMaps, appNS, "howdy") {
		t.Fatal("Landscaper ran the update although nothing asked it to")
	}
	out, code := w.PlanExitCode()
	if code != 2 || !strings.Contains(strings.Join(strings.Fields(out), " "), "did not start Landscaper's job for them") {
		t.Fatalf("plan after an apply that started no job: exit %d, want 2 with a warning saying why:\n%s", code, out)
	}
	w.Apply()
	if !k.exists(configMaps, appNS, "howdy") {
		t.Error("the update did not run")
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the update: exit %d, want 0:\n%s", code, out)
	}
	if out, code := w.Run(nil, "destroy", "-input=false", "-no-color", "-auto-approve"); code != 0 {
		t.Fatalf("terraform destroy exited %d:\n%s", code, out)
	}
}
