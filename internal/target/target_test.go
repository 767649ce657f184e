package target

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheckKubernetesCluster(t *testing.T) {
	const secret = "tok3n-value"
	kc := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: https://127.0.0.1:6443}\nusers:\n- name: u\n  user: {token: " + secret + "}\n"
	good, _ := json.Marshal(map[string]string{"kubeconfig": kc})
	if err := CheckKubernetesCluster(good); err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		`{}`:                             `no "kubeconfig"`,
		`{"kubeconfig": 3}`:              "must be a string",
		`{"kubeconfig": "a: [", "x": 1}`: "one field",
		`{"kubeconfig": "users: []"}`:    "names no cluster",
		`{"kubeconfig": "{{"}`:           "not YAML",
		`[1]`:                            "one field",
	}
	for cfg, want := range bad {
		err := CheckKubernetesCluster(json.RawMessage(cfg))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", cfg, err, want)
		}
	}
	withSecret, _ := json.Marshal(map[string]any{"kubeconfig": kc, "token": secret})
	if err := CheckKubernetesCluster(withSecret); err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("error must not quote the config: %v", err)
	}
}
