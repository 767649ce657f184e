//go:build unix

package lscluster

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

func wantErr(t *testing.T, err, is error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	if is != nil && !errors.Is(err, is) {
		t.Errorf("error %q is not %v", err, is)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

// Each object an installation needs, gone: the error names what was looked
// up, and for whom.
func TestReadBadInput(t *testing.T) {
	c := newCluster(t)
	ns := c.ns
	c.write(targetYAML("my-cluster"))
	c.write("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DataObject\nmetadata:\n  name: my-release\ndata: echo\n")
	c.write("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: s3cr3t-pw\n")
	c.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  greeting: hello\n")
	c.write("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Context\nmetadata:\n  name: examples\n")
	installation := func(name, imports string) {
		c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata:
  name: ` + name + `
spec:
  context: examples
  blueprint:
    ref:
      resourceName: blueprint
  imports:
` + imports + `
status:
  observedGeneration: 1
  phase: Succeeded
`)
	}
	installation("ok", "    data:\n    - name: release\n      dataRef: my-release\n    - name: password\n      secretRef: {name: db, key: password}\n    - name: greeting\n      configMapRef: {name: settings, key: greeting}\n    targets:\n    - name: cluster\n      target: my-cluster\n")
	installation("no-key", "    data:\n    - name: password\n      secretRef: {name: db, key: pasword}\n")
	installation("no-cm-key", "    data:\n    - name: greeting\n      configMapRef: {name: settings, key: greting}\n")
	installation("two-refs", "    data:\n    - name: release\n      dataRef: my-release\n      configMapRef: {name: settings}\n")
	if _, err := c.read("ok"); err != nil {
		t.Fatalf("the installation reads before anything is gone: %v", err)
	}

	_, err := c.read("missing")
	wantErr(t, err, ErrNotFound, "Installation "+ns+"/missing")
	_, err = c.read("no-key")
	wantErr(t, err, ErrNotFound, "Installation "+ns+"/no-key", "Secret "+ns+`/db (import "password", secretRef) has no key "pasword"`)
	_, err = c.read("no-cm-key")
	wantErr(t, err, ErrNotFound, "ConfigMap "+ns+`/settings (import "greeting", configMapRef) has no key "greting"`)
	_, err = c.read("two-refs")
	wantErr(t, err, nil, `data import "release" must set exactly one of dataRef, secretRef and configMapRef`)

	// Then, one after the other, what it imports goes away, last read
	// first, so that each read fails at the object just removed.
	for _, gone := range []struct{ kind, name, msg string }{
		{"Target", "my-cluster", "Target " + ns + `/my-cluster (import "cluster", target "my-cluster")`},
		{"ConfigMap", "settings", "ConfigMap " + ns + `/settings (import "greeting", configMapRef)`},
		{"Secret", "db", "Secret " + ns + `/db (import "password", secretRef)`},
		{"DataObject", "my-release", "DataObject " + ns + `/my-release (import "release", dataRef "my-release")`},
		{"Context", "examples", "Context " + ns + "/examples (spec.context)"},
	} {
		c.remove(gone.kind, gone.name)
		_, err := c.read("ok")
		wantErr(t, err, ErrNotFound, "Installation "+ns+"/ok: ", gone.msg, "not found")
	}
}

func TestReadUnreachableCluster(t *testing.T) {
	// Nothing listens on port 1.
	r, err := New(&rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Read(t.Context(), "cu-example", "hello-world")
	wantErr(t, err, ErrUnreachable, "https://127.0.0.1:1", "landscaper.gardener.cloud/v1alpha1")
}

func TestReadNotALandscaperCluster(t *testing.T) {
	// Read before the CRDs were installed (TestMain).
	wantErr(t, bareErr, ErrNotLandscaper, env.Host(), "serves no landscaper.gardener.cloud/v1alpha1", "CRDs are not installed")
}
