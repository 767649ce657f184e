//go:build unix

package lscluster

import (
	"encoding/json"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Private state kept an unkeyed SHA-256 of each Secret's data: a
// guessable secret was found by hashing guesses (the remote review's F7).
// A record holds nothing derived from a secret now: the records of two
// installations that differ only in their secrets are the same.
func TestRecordsHoldNothingOfSecrets(t *testing.T) {
	records := func(password, token string) string {
		s := Spec{Namespace: "ls", Name: "app", Files: testBlueprint, SecretData: map[string]any{"password": password},
			PullSecrets: map[string]RegistryAuth{"r.example": {Username: "robot", Password: token}},
			Targets:     map[string]Target{"cluster": {Type: "t", Config: json.RawMessage(`{"token":"` + token + `"}`)}}}
		objs, err := s.Objects()
		if err != nil {
			t.Fatal(err)
		}
		var recs []Object
		for _, o := range objs {
			recs = append(recs, o.Record())
		}
		out, err := json.Marshal(recs)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if a, b := records("summer2024", "tok-1"), records("winter2025", "tok-2"); a != b {
		t.Errorf("records differ with the secrets, so they hold something of them:\n%s\n%s", a, b)
	}
}

// What a record no longer holds is asked of the cluster: a Secret whose
// data differs from what the provider writes (someone changed it, or
// the configuration did), or that is gone.
func TestSecretsChangedReadsTheCluster(t *testing.T) {
	c := newCluster(t)
	w, err := NewWriter(restConfig())
	if err != nil {
		t.Fatal(err)
	}
	objects := func(password string) []Object {
		s := Spec{Namespace: c.ns, Name: "app", Files: testBlueprint, SecretData: map[string]any{"password": password, "other": "same"}}
		objs, err := s.Objects()
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	objs := objects("pw-1")
	if _, err := w.Apply(t.Context(), Owner{ID: NewOwnerID(), Installation: "app"}, objs); err != nil {
		t.Fatal(err)
	}
	check := func(what string, objs []Object, want ...string) {
		t.Helper()
		got, err := w.SecretsChanged(t.Context(), objs)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: changed %v (%v), want %v", what, got, err, want)
		}
	}
	check("as written", objs)
	check("another password in the configuration", objects("pw-2"), "Secret/app.import.password")
	if _, err := c.d.Resource(secretsGVR).Namespace(c.ns).Patch(t.Context(), "app.import.other", types.MergePatchType,
		[]byte(`{"data":{"value":"ImNoYW5nZWQi"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	check("changed in the cluster", objs, "Secret/app.import.other")
	c.remove("Secret", "app.import.password")
	check("deleted in the cluster", objs, "Secret/app.import.other", "Secret/app.import.password")
}
