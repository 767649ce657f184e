package lscluster

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestEvaluateMappings(t *testing.T) {
	// The guided tour's import-data-mappings example, plus access to a
	// target import as Landscaper passes it: the whole Target object.
	mappings := map[string]json.RawMessage{
		"release":    json.RawMessage(`{"name": "(( temp-name ))", "namespace": "(( temp-namespace ))"}`),
		"values":     json.RawMessage(`{"text": "hello"}`),
		"targetType": json.RawMessage(`"(( cluster.spec.type ))"`),
		"names":      json.RawMessage(`"(( map[clusters|t|->t.metadata.name] ))"`),
		"joined":     json.RawMessage(`"(( temp-name \"-\" temp-namespace ))"`),
	}
	target := func(name string) map[string]any {
		return map[string]any{
			"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Target",
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"type": "landscaper.gardener.cloud/kubernetes-cluster", "config": map[string]any{"kubeconfig": "secret"}},
		}
	}
	values := map[string]any{
		"temp-name": "echo", "temp-namespace": "example", "replicas": 2,
		"cluster":  target("my-cluster"),
		"clusters": []any{target("a"), target("b")},
	}
	got, err := EvaluateMappings(mappings, values)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"release":    map[string]any{"name": "echo", "namespace": "example"},
		"values":     map[string]any{"text": "hello"},
		"targetType": "landscaper.gardener.cloud/kubernetes-cluster",
		"names":      []any{"a", "b"},
		"joined":     "echo-example",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EvaluateMappings =\n%#v\nwant\n%#v", got, want)
	}

	_, err = EvaluateMappings(map[string]json.RawMessage{"broken": json.RawMessage(`"(( missing ))"`)}, values)
	if err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("a mapping of an unknown import: %v, want an error naming the mapping", err)
	}
}

func TestCarriesSecret(t *testing.T) {
	var secrets []string
	collectSecrets(map[string]any{"password": "s3cr3t", "port": 5432.0, "x": "ab", "list": []any{"token-1"}}, &secrets)
	for _, c := range []struct {
		v    any
		want bool
	}{
		{"s3cr3t", true},
		{"url://user:s3cr3t@host", true},
		{map[string]any{"a": []any{"token-1"}}, true},
		{5432.0, true},
		{"ab", false}, // too short to count
		{map[string]any{"text": "hello"}, false},
		{nil, false},
	} {
		if got := carriesSecret(c.v, secrets); got != c.want {
			t.Errorf("carriesSecret(%#v) = %v, want %v", c.v, got, c.want)
		}
	}
}

// Issue 25: a mapping that transforms a Secret's value or a Target's
// config (base64, a part of it) carries none of its text, yet was made of
// it: it is sensitive by derivation, as in rendering. A mapping of plain
// imports is not.
func TestMappingsSensitiveByDerivation(t *testing.T) {
	rd := &instReader{out: &Installation{Imports: map[string]Import{
		"password": {Value: "s3cr3t-pw", Sensitive: true},
		"port":     {Value: 5432.0, Sensitive: true},
		"plain":    {Value: "hello"},
	}}, targetValues: map[string]any{
		"cluster": map[string]any{"kind": "Target", "metadata": map[string]any{"name": "c"},
			"spec": map[string]any{"type": "landscaper.gardener.cloud/kubernetes-cluster", "config": map[string]any{"kubeconfig": "tok-123"}}},
	}}
	m := map[string]json.RawMessage{
		"encoded":  json.RawMessage(`"(( base64(password) ))"`),
		"upper":    json.RawMessage(`"(( upper(password) ))"`),
		"portDiv":  json.RawMessage(`"(( port / 10 ))"`),
		"kubeSize": json.RawMessage(`"(( length(cluster.spec.config.kubeconfig) ))"`),
		"kubeB64":  json.RawMessage(`"(( base64(cluster.spec.config.kubeconfig) ))"`),
		"name":     json.RawMessage(`"(( cluster.metadata.name ))"`),
		"greeting": json.RawMessage(`"(( plain \"-world\" ))"`),
	}
	values := map[string]any{"password": "s3cr3t-pw", "port": 5432.0, "plain": "hello", "cluster": rd.targetValues["cluster"]}
	res, err := EvaluateMappings(m, values)
	if err != nil {
		t.Fatal(err)
	}
	derived, _ := rd.derivedMappings(m, res, nil)
	for key, want := range map[string]bool{"encoded": true, "upper": true, "portDiv": true, "kubeB64": true,
		"kubeSize": false, "name": false, "greeting": false} {
		if derived[key] != want {
			t.Errorf("%s (%v): derived %v, want %v", key, res[key], derived[key], want)
		}
	}
	for _, key := range []string{"encoded", "upper", "portDiv", "kubeB64"} {
		if carriesSecret(res[key], []string{"s3cr3t-pw", "5432", "tok-123"}) {
			t.Errorf("%s = %v: a literal search finds the secret, the test shows nothing", key, res[key])
		}
	}
}

// A mapping that fails for the real value of a Secret only tells nothing:
// not the value, nor what the mapping made of it, nor that it fails so.
func TestMappingFailingOnlyForTheSecretIsNotShown(t *testing.T) {
	rd := &instReader{out: &Installation{Imports: map[string]Import{
		"password": {Value: "s3cr3t-pw", Sensitive: true},
	}}, secrets: []string{"s3cr3t-pw"}}
	rd.inst = &lsInstallation{}
	rd.inst.Spec.ImportDataMappings = map[string]json.RawMessage{
		"checked": json.RawMessage(`"(( password == \"s3cr3t-pw\" ? error(\"retired: \" upper(password)) : \"ok\" ))"`),
	}
	err := rd.mappings(context.Background())
	if err == nil {
		t.Fatal("want the mapping's error")
	}
	msg := rd.mask(err).Error()
	if strings.Contains(strings.ToLower(msg), "s3cr3t") || !strings.Contains(msg, "the message is not shown") {
		t.Fatalf("the error says: %s", msg)
	}
}
