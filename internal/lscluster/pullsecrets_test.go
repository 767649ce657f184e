package lscluster

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// TestPullSecretHosts: the hosts are those Landscaper reads the component
// from, with the scheme and the repository path cut off; a local
// repository has none.
func TestPullSecretHosts(t *testing.T) {
	comp := func(rc map[string]any) *ComponentRef {
		return &ComponentRef{Name: "example.com/app", Version: "1.0.0", RepositoryContext: rc}
	}
	for _, c := range []struct {
		comp *ComponentRef
		ow   []ocm.Overwrite
		want []string
	}{
		{comp(map[string]any{"type": "OCIRegistry", "baseUrl": "registry.example:5000/ocm/sub"}), nil, []string{"registry.example:5000"}},
		{comp(map[string]any{"type": "ociRegistry", "baseUrl": "http://127.0.0.1:5001/ocm"}), nil, []string{"127.0.0.1:5001"}},
		{comp(map[string]any{"type": "OCIRegistry", "baseUrl": "https://ghcr.io"}), nil, []string{"ghcr.io"}},
		{comp(map[string]any{"type": "CommonTransportFormat", "filePath": "/tmp/ctf"}), nil, nil},
		{nil, nil, nil},
		{comp(map[string]any{"type": "OCIRegistry", "baseUrl": "a.example/ocm"}),
			[]ocm.Overwrite{{Substitution: ocm.OverwriteRef{RepositoryContext: map[string]any{"type": "OCIRegistry", "baseUrl": "mirror.example/ocm"}}},
				{Substitution: ocm.OverwriteRef{Version: "2.0.0"}}},
			[]string{"a.example", "mirror.example"}},
	} {
		if got := PullSecretHosts(c.comp, c.ow); !reflect.DeepEqual(got, c.want) {
			t.Errorf("PullSecretHosts(%v, %v) = %v, want %v", c.comp, c.ow, got, c.want)
		}
	}
}

// TestPullSecretsFor: of the provider's registry_credentials, only the
// component's registry's are handed over, whichever scheme their key
// names; a key without a scheme wins over one with.
func TestPullSecretsFor(t *testing.T) {
	creds := map[string]RegistryAuth{
		"registry.example:5000":         {Username: "plain-key", Password: "p1"},
		"https://registry.example:5000": {Username: "https-key", Password: "p2"},
		"http://127.0.0.1:5001":         {Username: "loopback", Password: "p3"},
		"other.example":                 {Username: "other", Password: "p4"},
	}
	got := PullSecretsFor(creds, []string{"127.0.0.1:5001", "registry.example:5000", "unknown.example"})
	want := map[string]RegistryAuth{"registry.example:5000": {Username: "plain-key", Password: "p1"},
		"127.0.0.1:5001": {Username: "loopback", Password: "p3"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PullSecretsFor = %v, want %v", got, want)
	}
}

// TestPullSecretObjects: the registry credentials become one Secret of
// type kubernetes.io/dockerconfigjson whose .dockerconfigjson has an auths
// entry per host with user name, password and auth, as Landscaper's
// registry access reads it; the Context names it in registryPullSecrets;
// it counts as a credential Secret (a change to it alone runs nothing),
// but not as a target's Secret (a target export may not copy it).
func TestPullSecretObjects(t *testing.T) {
	s := Spec{Namespace: "ls", Name: "app", Blueprint: Blueprint{Ref: "blueprint"},
		Component:   &ComponentRef{Name: "example.com/app", Version: "1.0.0", RepositoryContext: map[string]any{"type": "OCIRegistry", "baseUrl": "http://127.0.0.1:5001/ocm"}},
		PullSecrets: map[string]RegistryAuth{"127.0.0.1:5001": {Username: "robot", Password: "pull-secret-pw"}},
		Targets:     map[string]Target{"cluster": {Type: "landscaper.gardener.cloud/kubernetes-cluster", Config: json.RawMessage(`{}`)}},
		SecretData:  map[string]any{"password": "x"},
	}
	objs, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]Object{}
	for _, o := range objs {
		byKey[o.Key()] = o
	}
	sec, ok := byKey["Secret/"+RegistrySecret("app")]
	if !ok {
		t.Fatalf("no registry Secret among %v", byKey)
	}
	if sec.Body["type"] != "kubernetes.io/dockerconfigjson" {
		t.Errorf("the registry Secret's type is %v", sec.Body["type"])
	}
	data, _ := sec.Body["data"].(map[string]any)
	enc, _ := data[".dockerconfigjson"].(string)
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Auths map[string]struct{ Username, Password, Auth string } `json:"auths"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	e := cfg.Auths["127.0.0.1:5001"]
	if len(cfg.Auths) != 1 || e.Username != "robot" || e.Password != "pull-secret-pw" ||
		e.Auth != base64.StdEncoding.EncodeToString([]byte("robot:pull-secret-pw")) {
		t.Errorf(".dockerconfigjson = %s", raw)
	}
	ctx := byKey["Context/app.context"].Body
	if got := ctx["registryPullSecrets"]; !reflect.DeepEqual(got, []any{map[string]any{"name": RegistrySecret("app")}}) {
		t.Errorf("Context registryPullSecrets = %v", got)
	}
	rc, _ := ctx["repositoryContext"].(map[string]any)
	if got := rc["baseUrl"]; got != "http://127.0.0.1:5001/ocm" {
		t.Errorf("Context repositoryContext.baseUrl = %v", got)
	}
	if strings.Contains(sec.Masked(), "pull-secret-pw") || strings.Contains(sec.Masked(), "cm9ib3Q6") {
		t.Errorf("the masked registry Secret shows its data:\n%s", sec.Masked())
	}
	cs, ts := CredentialSecrets(objs), TargetSecrets(objs)
	if !cs[RegistrySecret("app")] || !cs["app.target.cluster"] || cs["app.import.password"] {
		t.Errorf("CredentialSecrets = %v", cs)
	}
	if ts[RegistrySecret("app")] {
		t.Errorf("TargetSecrets holds the registry Secret: %v", ts)
	}

	s.PullSecrets = map[string]RegistryAuth{"127.0.0.1:5001": {Token: "bearer-tok"}}
	if _, err := s.Objects(); err == nil || !strings.Contains(err.Error(), "a token") || strings.Contains(err.Error(), "bearer-tok") {
		t.Errorf("a token credential: %v", err)
	}
	s.PullSecrets = nil
	objs, err = s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.Kind == KindSecret && o.Name == RegistrySecret("app") || o.Kind == KindContext && o.Body["registryPullSecrets"] != nil {
			t.Errorf("without credentials, %s still has a pull secret", o.Key())
		}
	}
}
