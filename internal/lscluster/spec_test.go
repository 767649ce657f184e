package lscluster

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSpecObjectsMaskSecrets: what a plan may show of a remote
// installation's objects holds no secret import, target config or
// registry password, and every object the Installation names is there.
func TestSpecObjectsMaskSecrets(t *testing.T) {
	s := Spec{
		Namespace: "ls", Name: "app",
		Files:       map[string][]byte{"blueprint.yaml": []byte("kind: Blueprint\n"), "bin/data": {0xff, 0x00}},
		Data:        map[string]any{"replicas": 2},
		SecretData:  map[string]any{"password": "hunter2-secret"},
		Targets:     map[string]Target{"cluster": {Type: "landscaper.gardener.cloud/kubernetes-cluster", Config: json.RawMessage(`{"kubeconfig":"token: kube-secret"}`)}},
		PullSecrets: map[string]RegistryAuth{"registry.example:5000": {Username: "u", Password: "registry-secret"}},
		Component:   &ComponentRef{Name: "example.com/app", Version: "1.0.0", RepositoryContext: map[string]any{"type": "OCIRegistry", "baseUrl": "registry.example:5000"}},
	}
	objs, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	var all strings.Builder
	for _, o := range objs {
		keys[o.Key()] = true
		all.WriteString(o.Masked())
		if o.Kind != KindSecret {
			continue
		}
		back, err := ParseMasked(o.Key(), o.Masked())
		if err != nil {
			t.Fatal(err)
		}
		data, _ := back.Body["data"].(map[string]any)
		for k, v := range data {
			if v != MaskedValue {
				t.Errorf("%s shows %s: %v", o.Key(), k, v)
			}
		}
	}
	for _, want := range []string{"Installation/app", "Context/app.context", "DataObject/app.import.replicas", "Secret/app.import.password",
		"Target/app.target.cluster", "Secret/app.target.cluster", "Secret/app.registry"} {
		if !keys[want] {
			t.Errorf("no %s among %v", want, keys)
		}
	}
	if objs[len(objs)-1].Kind != KindInstallation {
		t.Errorf("the Installation is written before what it names: %s last", objs[len(objs)-1].Key())
	}
	for _, secret := range []string{"hunter2", "kube-secret", "registry-secret", "aHVudGVyMi"} {
		if strings.Contains(all.String(), secret) {
			t.Errorf("%q shows in the masked objects:\n%s", secret, all.String())
		}
	}
	if !strings.Contains(all.String(), "---Start Binary---") || !strings.Contains(all.String(), "data: 2\n") {
		t.Errorf("the inline blueprint or a data import is missing:\n%s", all.String())
	}
}

// TestInstallationHasNoSiblingImports: the Installation tells Landscaper
// that it imports nothing from its siblings (its imports are objects
// written for it alone), which spares Landscaper a listing of every
// Installation of the namespace in each reconcile and the touching of
// siblings in each deletion.
func TestInstallationHasNoSiblingImports(t *testing.T) {
	objs, err := Spec{Namespace: "ls", Name: "app", Files: map[string][]byte{"blueprint.yaml": []byte("kind: Blueprint\n")},
		Data: map[string]any{"replicas": 2}}.Objects()
	if err != nil {
		t.Fatal(err)
	}
	inst := objs[len(objs)-1]
	opt, _ := inst.Body["spec"].(map[string]any)["optimization"].(map[string]any)
	if inst.Kind != KindInstallation || opt["hasNoSiblingImports"] != true || opt["hasNoSiblingExports"] != nil {
		t.Errorf("%s: spec.optimization %v, want hasNoSiblingImports alone", inst.Key(), opt)
	}
	for _, o := range objs {
		if o.Kind == KindDataObject && !strings.HasPrefix(o.Name, "app.") {
			t.Errorf("the installation imports %s, which is not written for it alone", o.Key())
		}
	}
}

// TestObjectName: a name that cannot be part of an object's name is made
// one, and two names cleaned alike stay apart.
func TestObjectName(t *testing.T) {
	if got := ObjectName("app", "import", "replicas"); got != "app.import.replicas" {
		t.Errorf("plain name: %s", got)
	}
	a, b := ObjectName("app", "import", "My_Value"), ObjectName("app", "import", "my.value")
	if a == b || !subdomain.MatchString(a) {
		t.Errorf("%s and %s", a, b)
	}
	if _, err := (Spec{Namespace: "ls", Name: "Not_A_Name", Files: map[string][]byte{"blueprint.yaml": nil}}).Objects(); err == nil {
		t.Error("an invalid Installation name was accepted")
	}
}
