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
		"metadata": map[string]any{"name": "app.export.out", "namespace": "ls"},
		"spec": map[string]any{"type": "landscaper.gardener.cloud/kubernetes-cluster",
			"secretRef": map[string]any{"name": "other.target.cluster", "key": "config"}}}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{secretsGVR: "SecretList", targetsGVR: "TargetList", dataObjectsGVR: "DataObjectList"},
		secret, target)
	w := &Writer{Reader: &Reader{dynamic: dyn}}
	spec := Spec{Namespace: "ls", Name: "app", Files: map[string][]byte{"blueprint.yaml": []byte("kind: Blueprint\n")},
		TargetExports: []string{"out"}}
	_, targets, err := w.Exports(context.Background(), spec)
	if err == nil || !strings.Contains(err.Error(), "refused") || strings.Contains(err.Error(), "other-admin-token") {
		t.Fatalf("Exports: %v (targets %v), want the foreign Secret refused", err, targets)
	}
}
