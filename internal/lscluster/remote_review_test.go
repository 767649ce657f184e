package lscluster

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// A target import "x.0" and element 0 of the target list "x" would be the
// same Secret and Target, one config silently replacing the other (the
// remote review's F1, within an installation): refused, naming the object.
func TestObjectNamesThatMeetAreRefused(t *testing.T) {
	s := Spec{Namespace: "ls", Name: "app", Files: map[string][]byte{"blueprint.yaml": []byte("kind: Blueprint\n")},
		Targets:     map[string]Target{"x.0": {Type: "t", Config: json.RawMessage(`{"k":"single"}`)}},
		TargetLists: map[string][]Target{"x": {{Type: "t", Config: json.RawMessage(`{"k":"list"}`)}}}}
	if _, err := s.Objects(); err == nil || !strings.Contains(err.Error(), "would be Secret/app.target.x.0") {
		t.Fatalf("Objects: %v, want the meeting names refused", err)
	}
}

// Landscaper copies an exported target's secretRef from the blueprint, and
// the provider reads it with its own credentials: a target export naming
// another installation's Secret would copy that kubeconfig into this one's
// state (the remote review's F2). Only the installation's own target
// Secrets may be read.
func TestTargetExportOfAnotherSecretIsRefused(t *testing.T) {
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "other.target.cluster", "namespace": "ls"},
		"data":     map[string]any{"config": base64.StdEncoding.EncodeToString([]byte(`{"kubeconfig":"token: other-admin-token"}`))}}}
	target := &unstructured.Unstructured{Object: map[string]any{"apiVersion": GroupVersion.String(), "kind": "Target",
		"metadata": map[string]any{"name": "app.export.out", "namespace": "ls", "labels": map[string]any{labelDOSource: InstallationContext("app")},
			"ownerReferences": exportedBy("app", "uid-app")},
		"spec": map[string]any{"type": "landscaper.gardener.cloud/kubernetes-cluster",
			"secretRef": map[string]any{"name": "other.target.cluster", "key": "config"}}}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{secretsGVR: "SecretList", targetsGVR: "TargetList", dataObjectsGVR: "DataObjectList"},
		secret, target)
	w := &Writer{Reader: &Reader{dynamic: dyn}}
	spec := Spec{Namespace: "ls", Name: "app", Files: map[string][]byte{"blueprint.yaml": []byte("kind: Blueprint\n")},
		TargetExports: []string{"out"}}
	_, targets, err := w.Exports(context.Background(), spec, "uid-app")
	if err == nil || !strings.Contains(err.Error(), "holds none of this installation's target imports") || strings.Contains(err.Error(), "other-admin-token") {
		t.Fatalf("Exports: %v (targets %v), want the foreign Secret refused", err, targets)
	}
}

// exportedBy is the ownerReferences Landscaper gives what an
// Installation exports (SetExclusiveOwnerReference in its
// installations.Operation.CreateOrUpdateExports).
func exportedBy(name, uid string) []any {
	return []any{map[string]any{"apiVersion": GroupVersion.String(), "kind": KindInstallation, "name": name, "uid": uid}}
}

// An export DataObject or Target under this installation's name that
// another Installation of the namespace exported (Landscaper labels what
// it writes with its source) is refused, not taken as this one's: the
// second remote review's R8. So is one another Installation of this name
// exported, written by another owner after ours was deleted (its UID is
// another: third remote review, RR3-7).
func TestExportOfAnotherInstallationIsRefused(t *testing.T) {
	exported := func(source, uid string) []runtime.Object {
		labels := map[string]any{labelDOSource: source, labelDOSourceType: sourceTypeExport}
		return []runtime.Object{
			&unstructured.Unstructured{Object: map[string]any{"apiVersion": GroupVersion.String(), "kind": "DataObject",
				"metadata": map[string]any{"name": "app.export.url", "namespace": "ls", "labels": labels, "ownerReferences": exportedBy("app", uid)},
				"data":     "https://exported.example"}},
			&unstructured.Unstructured{Object: map[string]any{"apiVersion": GroupVersion.String(), "kind": "Target",
				"metadata": map[string]any{"name": "app.export.out", "namespace": "ls", "labels": labels, "ownerReferences": exportedBy("app", uid)},
				"spec":     map[string]any{"type": "landscaper.gardener.cloud/kubernetes-cluster", "config": map[string]any{"kubeconfig": "exported"}}}},
		}
	}
	for _, c := range []struct {
		source, uid string
		want        string
	}{
		{InstallationContext("app"), "uid-app", ""},
		{InstallationContext("other"), "uid-app", `was not exported by the Installation app but by "Inst.other"`},
		{InstallationContext("app"), "uid-of-another-app", "was not exported by the Installation ls/app this apply wrote (UID uid-app)"},
		{InstallationContext("app"), "", "was not exported by the Installation ls/app this apply wrote"},
	} {
		for _, only := range []string{"data", "target"} {
			objs := exported(c.source, c.uid)
			if c.uid == "" {
				for _, o := range objs {
					if u, ok := o.(*unstructured.Unstructured); ok {
						u.SetOwnerReferences(nil)
					}
				}
			}
			dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{secretsGVR: "SecretList", targetsGVR: "TargetList", dataObjectsGVR: "DataObjectList"},
				objs...)
			w := &Writer{Reader: &Reader{dynamic: dyn}}
			spec := Spec{Namespace: "ls", Name: "app", Files: map[string][]byte{"blueprint.yaml": []byte("kind: Blueprint\n")}}
			if only == "data" {
				spec.DataExports = []string{"url"}
			} else {
				spec.TargetExports = []string{"out"}
			}
			data, targets, err := w.Exports(context.Background(), spec, "uid-app")
			switch {
			case c.want == "" && (err != nil || len(data)+len(targets) != 1):
				t.Errorf("%s export from %s (%s): %v, %v, %v; want it taken", only, c.source, c.uid, data, targets, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%s export from %s (%s): %v, %v, %v; want %q", only, c.source, c.uid, data, targets, err, c.want)
			}
		}
	}
}
