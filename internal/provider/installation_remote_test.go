package provider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/masking"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/render"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// TestRemoteMaskHidesProviderTargetCredentials: a message of Landscaper's
// that quotes a provider target's token, or its whole kubeconfig, shows
// neither; the tree's masking never sees those configs.
func TestRemoteMaskHidesProviderTargetCredentials(t *testing.T) {
	config := []byte(`{"kubeconfig":"apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: tok-remote-7f3a9c\n"}`)
	run := &remoteRun{sec: masking.NewTree(), credentials: credentialStrings(config)}
	for _, msg := range []string{"unauthorized with token tok-remote-7f3a9c", "bad kubeconfig apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: tok-remote-7f3a9c\n"} {
		if got := run.mask(msg); strings.Contains(got, "tok-remote-7f3a9c") {
			t.Errorf("mask(%q) = %q", msg, got)
		}
	}
	if got := run.mask("phase Failed"); got != "phase Failed" {
		t.Errorf("a message without credentials became %q", got)
	}
}

// A refresh or a destroy in remote mode renders nothing, so it cannot
// tell which provider targets the tree imports: what they say is masked
// with the credentials of every provider target, and the sensitive
// imports.
func TestRemoteSecretsMaskRefreshAndDestroy(t *testing.T) {
	config := []byte(`{"kubeconfig":"apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: tok-refresh-8e2b1d\n"}`)
	pt := &providerTargets{known: true, byName: map[string]*deployer.Target{"prod": {Type: "landscaper.gardener.cloud/kubernetes-cluster", Config: config}}}
	x := &installations{targets: func() *providerTargets { return pt }}
	f := map[string]tftypes.Value{attrSensitiveImports: tftypes.NewValue(tftypes.DynamicPseudoType, nil)}
	sec := x.remoteSecrets(f)
	if got := sec.Text("Unauthorized: token tok-refresh-8e2b1d expired"); strings.Contains(got, "tok-refresh-8e2b1d") {
		t.Errorf("a refresh message shows a provider target's token: %q", got)
	}
}

// An inline target config (a target import, a target list element, a
// target map entry) is masked in what a refresh or a destroy reports, as
// the apply masks it (the remote review's F8): before, only provider
// targets' credentials and sensitive imports were.
func TestRemoteSecretsMaskInlineTargetConfigs(t *testing.T) {
	rt := objectType(&installationResource{})
	f := make(map[string]tftypes.Value, len(rt.AttributeTypes))
	for n, at := range rt.AttributeTypes {
		f[n] = tftypes.NewValue(at, nil)
	}
	inline := func(token string) tftypes.Value {
		et := as[tftypes.Object](as[tftypes.Map](rt.AttributeTypes[attrTargets]).ElementType)
		v := make(map[string]tftypes.Value, len(et.AttributeTypes))
		for n, at := range et.AttributeTypes {
			v[n] = tftypes.NewValue(at, nil)
		}
		v["type"] = stringValue("landscaper.gardener.cloud/kubernetes-cluster")
		v["config"] = stringValue(`{"kubeconfig":"apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: ` + token + `\n"}`)
		return tftypes.NewValue(et, v)
	}
	f[attrTargets] = tftypes.NewValue(rt.AttributeTypes[attrTargets], map[string]tftypes.Value{"cluster": inline("tok-inline-4c7d2e")})
	lt := rt.AttributeTypes["target_lists"]
	f["target_lists"] = tftypes.NewValue(lt, map[string]tftypes.Value{"shoots": tftypes.NewValue(as[tftypes.Map](lt).ElementType,
		[]tftypes.Value{inline("tok-list-9a1f3b")})})
	mt := rt.AttributeTypes["target_maps"]
	f["target_maps"] = tftypes.NewValue(mt, map[string]tftypes.Value{"regions": tftypes.NewValue(as[tftypes.Map](mt).ElementType,
		map[string]tftypes.Value{"eu": inline("tok-map-6b8e0c")})})
	x := &installations{t: rt, targets: func() *providerTargets { return &providerTargets{known: true} }}
	sec := x.remoteSecrets(f)
	for _, tok := range []string{"tok-inline-4c7d2e", "tok-list-9a1f3b", "tok-map-6b8e0c"} {
		if got := sec.Text("Unauthorized: token " + tok + " expired"); strings.Contains(got, tok) {
			t.Errorf("a refresh or destroy message shows an inline target's token: %q", got)
		}
	}
}

// remoteFields is an installation's configuration in remote mode, as the
// protocol hands it over: attrs given as JSON, every other attribute null.
func remoteFields(t *testing.T, x *installations, attrs map[string]any) map[string]tftypes.Value {
	t.Helper()
	all := map[string]any{}
	for name := range x.t.AttributeTypes {
		all[name] = nil
	}
	maps.Copy(all, attrs)
	raw, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	v, err := tftypes.ValueFromJSONWithOpts(raw, x.t, tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true})
	if err != nil {
		t.Fatal(err)
	}
	return fields(v)
}

// Apply masks what Landscaper says with the credentials of the provider
// targets the tree imports as list elements and map entries too, not
// only as single targets: the remote review's R4.
func TestRemoteApplyMasksProviderTargetsInListsAndMaps(t *testing.T) {
	kubeconfig := func(token string) []byte {
		return []byte(`{"kubeconfig":"apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: ` + token + `\n"}`)
	}
	const kind = "landscaper.gardener.cloud/kubernetes-cluster"
	pt := &providerTargets{known: true, byName: map[string]*deployer.Target{
		"landscaper": {Type: kind, Config: kubeconfig("tok-landscaper-5c1e")},
		"listed":     {Type: kind, Config: kubeconfig("tok-listed-91ab3f")},
		"mapped":     {Type: kind, Config: kubeconfig("tok-mapped-27d0e8")},
	}}
	p := newProvider("test")
	x := p.installations
	x.targets = func() *providerTargets { return pt }
	x.allowed = func() *allowedDeployers { return nil }
	bp := `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: clusters, type: targetList, targetType: ` + kind + `}
  - {name: regions, type: targetMap, targetType: ` + kind + `}
`
	f := remoteFields(t, x, map[string]any{
		"name":                "app",
		"blueprint":           map[string]any{"filesystem": map[string]string{"blueprint.yaml": bp}},
		"target_lists":        map[string]any{"clusters": []any{map[string]any{"name": "listed"}}},
		"target_maps":         map[string]any{"regions": map[string]any{"eu": map[string]any{"name": "mapped"}}},
		attrLandscaperCluster: map[string]any{"target": "landscaper", "namespace": "ls"},
	})
	run, ps := x.renderRemote(context.Background(), f, pt)
	if ps.errors() || run == nil {
		t.Fatalf("renderRemote: %v", ps)
	}
	for _, token := range []string{"tok-listed-91ab3f", "tok-mapped-27d0e8"} {
		if got := run.mask("DeployItem app-x: Unauthorized with token " + token); strings.Contains(got, token) {
			t.Errorf("apply shows the credential of a provider target imported in a list or map: %q", got)
		}
	}
}

// Landscaper computes the exports on its own, so in remote mode every
// data export is held as sensitive whenever the tree holds a secret: an
// item exporting from a Kubernetes Secret, an inline target config, a
// sensitive import. Only with secret imports was it so, and a token read
// from a Secret landed in the plain exports: the remote review's R1.
func TestRemoteExportsOfATreeHoldingSecretsAreSensitive(t *testing.T) {
	const kind = "landscaper.gardener.cloud/kubernetes-cluster"
	pt := &providerTargets{known: true, byName: map[string]*deployer.Target{
		"landscaper": {Type: kind, Config: []byte(`{"kubeconfig":"x"}`)},
		"app":        {Type: kind, Config: []byte(`{"kubeconfig":"y"}`)},
	}}
	p := newProvider("test")
	x := p.installations
	x.targets = func() *providerTargets { return pt }
	x.allowed = func() *allowedDeployers { return nil }
	blueprint := func(fromKind string) string {
		return `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: cluster, type: target, targetType: ` + kind + `}
exports:
  - {name: token, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: sa
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            manifests: []
            exports:
              exports:
                - key: token
                  jsonPath: .data.token
                  fromResource: {apiVersion: v1, kind: ` + fromKind + `, name: sa-token, namespace: default}
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        token: {{ .values.deployitems.sa.token | quote }}
`
	}
	for _, c := range []struct {
		name   string
		kind   string
		target map[string]any
		want   bool
	}{
		{"an item exporting from a Secret", "Secret", map[string]any{"name": "app"}, true},
		{"an inline target config", "ConfigMap", map[string]any{"type": kind, "config": `{"kubeconfig":"inline"}`}, true},
		{"provider targets and plain data only", "ConfigMap", map[string]any{"name": "app"}, false},
	} {
		f := remoteFields(t, x, map[string]any{
			"name":                "app",
			"blueprint":           map[string]any{"filesystem": map[string]string{"blueprint.yaml": blueprint(c.kind)}},
			attrTargets:           map[string]any{"cluster": c.target},
			attrLandscaperCluster: map[string]any{"target": "landscaper", "namespace": "ls"},
		})
		run, ps := x.renderRemote(context.Background(), f, pt)
		if ps.errors() || run == nil {
			t.Fatalf("%s: renderRemote: %v", c.name, ps)
		}
		if got := run.exportsMayHoldSecrets(&lscluster.Tree{}); got != c.want {
			t.Errorf("%s: the exports are held as sensitive: %v, want %v", c.name, got, c.want)
		}
	}

	// A sub-installation whose imports are known only on the Landscaper
	// cluster is rendered there alone: its items, as Landscaper holds
	// them, tell what they read.
	f := remoteFields(t, x, map[string]any{
		"name":                "app",
		"blueprint":           map[string]any{"filesystem": map[string]string{"blueprint.yaml": laterSubBlueprint}},
		attrTargets:           map[string]any{"cluster": map[string]any{"name": "app"}},
		attrLandscaperCluster: map[string]any{"target": "landscaper", "namespace": "ls"},
	})
	run, ps := x.renderRemote(context.Background(), f, pt)
	if ps.errors() || run == nil {
		t.Fatalf("renderRemote: %v", ps)
	}
	for fromKind, want := range map[string]bool{"Secret": true, "ConfigMap": false} {
		tree := &lscluster.Tree{DeployItems: map[string]lscluster.DeployItem{
			"maker/m": {Type: "landscaper.gardener.cloud/mock", Config: []byte(`{"export":{"made":"yes"}}`)},
			"user/reader": {Type: lscluster.TypeManifest, Config: []byte(`{"exports":{"exports":[{"key":"token","jsonPath":".data.token",` +
				`"fromResource":{"apiVersion":"v1","kind":"` + fromKind + `","name":"sa-token","namespace":"default"}}]}}`)},
		}}
		if got := run.exportsMayHoldSecrets(tree); got != want {
			t.Errorf("an item Landscaper rendered exports from a %s: the exports are held as sensitive: %v, want %v", fromKind, got, want)
		}
	}
}

// laterSubBlueprint has a sub-installation (user) whose import is the
// export of its sibling (maker), known only once maker ran: a plan
// renders user only on the Landscaper cluster.
const laterSubBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
exports:
  - {name: token, type: data, schema: {type: string}}
subinstallations:
  - apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: InstallationTemplate
    name: maker
    blueprint: {filesystem: {blueprint.yaml: "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\nexports:\n  - {name: made, type: data, schema: {type: string}}\ndeployExecutions:\n  - name: x\n    type: GoTemplate\n    template: |\n      deployItems:\n        - name: m\n          type: landscaper.gardener.cloud/mock\n          config: {apiVersion: mock.deployer.landscaper.gardener.cloud/v1alpha1, kind: ProviderConfiguration, export: {made: yes}}\nexportExecutions:\n  - name: x\n    type: GoTemplate\n    template: |\n      exports:\n        made: {{ .values.deployitems.m.made | quote }}\n"}}
    exports:
      data: [{name: made, dataRef: made}]
  - apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: InstallationTemplate
    name: user
    blueprint: {filesystem: {blueprint.yaml: "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\nimports:\n  - {name: made, type: data, schema: {type: string}}\nexports:\n  - {name: token, type: data, schema: {type: string}}\nexportExecutions:\n  - name: x\n    type: GoTemplate\n    template: |\n      exports:\n        token: {{ .imports.made | quote }}\n"}}
    imports:
      data: [{name: made, dataRef: made}]
    exports:
      data: [{name: token, dataRef: token}]
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        token: {{ .values.dataobjects.token | quote }}
`

// A rotated registry password changes the pull secret alone, which plans
// no job (as a rotated target credential); a changed sensitive import,
// also a Secret, is input to the job and does.
func TestRemoteRotatedRegistryPasswordRunsNothing(t *testing.T) {
	spec := func(password, secret string) []lscluster.Object {
		s := lscluster.Spec{Namespace: "ls", Name: "app", Blueprint: lscluster.Blueprint{Ref: "blueprint"},
			Component:   &lscluster.ComponentRef{Name: "example.com/app", Version: "1.0.0", RepositoryContext: map[string]any{"type": "OCIRegistry", "baseUrl": "registry.example/ocm"}},
			PullSecrets: map[string]lscluster.RegistryAuth{"registry.example": {Username: "robot", Password: password}},
			SecretData:  map[string]any{"password": secret}}
		objs, err := s.Objects()
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	rs := &remoteState{}
	for _, o := range spec("pw-1", "s1") {
		rs.Objects = append(rs.Objects, o.Record())
	}
	// Records keep no Secret data: the cluster's Secrets tell which changed.
	keys, onlyCredentials := rs.changedObjects(spec("pw-2", "s1"), []string{"Secret/" + lscluster.RegistrySecret("app")})
	if !slices.Equal(keys, []string{"Secret/" + lscluster.RegistrySecret("app")}) || !onlyCredentials {
		t.Errorf("a rotated registry password: changed %v, only credentials %v", keys, onlyCredentials)
	}
	if keys, onlyCredentials = rs.changedObjects(spec("pw-1", "s2"), []string{"Secret/app.import.password"}); len(keys) != 1 || onlyCredentials {
		t.Errorf("a changed sensitive import: changed %v, only credentials %v", keys, onlyCredentials)
	}
}

// Registry credentials are handed to Landscaper only for the component's
// registry; a token there is refused on component.repository_context,
// naming the host and saying why, without the token.
func TestRemotePullSecretProblems(t *testing.T) {
	creds := map[string]lscluster.RegistryAuth{"registry.example": {Token: "tok-8d1f"}, "other.example": {Token: "tok-other"}}
	pulls := lscluster.PullSecretsFor(creds, lscluster.PullSecretHosts(&lscluster.ComponentRef{
		RepositoryContext: map[string]any{"type": "OCIRegistry", "baseUrl": "https://registry.example/ocm"}}, nil))
	ps := pullSecretProblems(pulls)
	if len(ps) != 1 || !ps.errors() {
		t.Fatalf("problems %v, want one error", ps)
	}
	text := ps[0].summary + ": " + ps[0].detail
	if !strings.Contains(text, "registry.example") || !strings.Contains(text, "username and password") ||
		strings.Contains(text, "tok-") || strings.Contains(text, "other.example") {
		t.Errorf("the problem says %s", text)
	}
	if p := ps[0].path; !p.Equal(attrPath("component").WithAttributeName(attrRepositoryContext)) {
		t.Errorf("the problem is on %v", p)
	}
	run := &remoteRun{sec: masking.NewTree(), credentials: registrySecrets(map[string]lscluster.RegistryAuth{"r": {Username: "u", Password: "reg-pw-31c7"}})}
	if got := run.mask("401 for u:reg-pw-31c7"); strings.Contains(got, "reg-pw-31c7") {
		t.Errorf("a message quoting the registry password: %q", got)
	}
}

// fakeLandscaperCluster is an API server serving Landscaper's API with no
// objects in it but the namespace ls of UID uid (none: the namespace may
// not be read): a cluster the objects of a state were never written to;
// and, with an owner, the Installation
// ls/app, Succeeded, that owner wrote.
func fakeLandscaperCluster(t *testing.T, uid, owner string) string {
	t.Helper()
	return fakeCluster{uid: uid, owner: owner}.serve(t)
}

// fakeCluster is what fakeLandscaperCluster serves, and more: with a
// secretOwner, the Secret ls/app.target.cluster (a kubeconfig) that owner
// wrote; with a namespaceError, that status code for the namespace.
type fakeCluster struct {
	uid, owner, secretOwner string
	namespaceError          int
	// secretData serves more Secrets, by name: their data (as JSON),
	// written by secretOwner.
	secretData map[string]string
}

func (c fakeCluster) serve(t *testing.T) string {
	t.Helper()
	gv := lscluster.GroupVersion.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fail := func(code int, reason string) {
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":%q,"code":%d}`, reason, code)
		}
		switch r.URL.Path {
		case "/apis/" + gv:
			var res []string
			for _, n := range []string{"installations", "targets", "dataobjects", "contexts", "executions", "deployitems"} {
				res = append(res, fmt.Sprintf(`{"name":%q,"namespaced":true,"kind":"X","verbs":["get","list"]}`, n))
			}
			fmt.Fprintf(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":%q,"resources":[%s]}`, gv, strings.Join(res, ","))
		case "/api/v1/namespaces/ls":
			switch {
			case c.namespaceError != 0:
				fail(c.namespaceError, http.StatusText(c.namespaceError))
			case c.uid == "":
				fail(http.StatusForbidden, "Forbidden")
			default:
				fmt.Fprintf(w, `{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"ls","uid":%q}}`, c.uid)
			}
		case "/apis/" + gv + "/namespaces/ls/installations/app":
			if c.owner == "" {
				fail(http.StatusNotFound, "NotFound")
				return
			}
			fmt.Fprintf(w, `{"kind":"Installation","apiVersion":%q,"metadata":{"name":"app","namespace":"ls","uid":"i1",`+
				`"annotations":{%q:%q}},"status":{"phase":"Succeeded","jobID":"j1","jobIDFinished":"j1"}}`,
				gv, lscluster.OwnerAnnotation, c.owner)
		case "/api/v1/namespaces/ls/secrets/app.target.cluster":
			if c.secretOwner == "" {
				fail(http.StatusNotFound, "NotFound")
				return
			}
			fmt.Fprintf(w, `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"app.target.cluster","namespace":"ls","uid":"s1",`+
				`"annotations":{%q:%q}},"data":{"config":"c2VjcmV0LWt1YmVjb25maWc="}}`, lscluster.OwnerAnnotation, c.secretOwner)
		default:
			if rest, ok := strings.CutPrefix(r.URL.Path, "/apis/"+gv+"/namespaces/ls/"); ok && !strings.Contains(rest, "/") {
				fmt.Fprintf(w, `{"kind":"List","apiVersion":%q,"metadata":{},"items":[]}`, gv)
				return
			}
			if name, ok := strings.CutPrefix(r.URL.Path, "/api/v1/namespaces/ls/secrets/"); ok && c.secretData[name] != "" {
				fmt.Fprintf(w, `{"kind":"Secret","apiVersion":"v1","metadata":{"name":%q,"namespace":"ls","uid":"s2",`+
					`"annotations":{%q:%q}},"type":"Opaque","data":%s}`, name, lscluster.OwnerAnnotation, c.secretOwner, c.secretData[name])
				return
			}
			fail(http.StatusNotFound, "NotFound")
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A provider target pointed at another cluster since the objects were
// written is refused everywhere, so a refresh does not take them for gone
// (dropping the resource, its Secrets left on the first cluster, tracked
// by no state) and nothing is written or deleted on the other cluster:
// another API server (the second remote review's R3), or another cluster
// at the same URL, told by the UID of the namespace (the third remote
// review's RR3-6: a port-forward, kubernetes.default.svc, a DNS name
// pointed at a new cluster). The cluster answers, and holds nothing of
// the state's: a refresh that read it would drop the resource.
func TestRemoteClusterMovedIsRefused(t *testing.T) {
	server := fakeLandscaperCluster(t, "uid-of-cluster-b", "")
	unreadable := fakeLandscaperCluster(t, "", "")
	kubeconfig := "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n    server: " + server +
		"\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\nusers:\n- name: u\n  user: {token: t0k3n-abcdef}\n"
	p := newProvider("test")
	x := p.installations
	pt := &providerTargets{known: true, byName: map[string]*deployer.Target{
		"landscaper": {Type: "landscaper.gardener.cloud/kubernetes-cluster", Config: []byte(`{"kubeconfig":` + strconv.Quote(kubeconfig) + `}`)},
		"unreadable": {Type: "landscaper.gardener.cloud/kubernetes-cluster", Config: []byte(`{"kubeconfig":` +
			strconv.Quote(strings.Replace(kubeconfig, server, unreadable, 1)) + `}`)}}}
	x.targets = func() *providerTargets { return pt }
	state := tftypes.NewValue(x.t, remoteFields(t, x, map[string]any{
		"name": "app", attrLandscaperCluster: map[string]any{"target": "landscaper", "namespace": "ls"},
	}))
	records := []lscluster.Object{{Kind: lscluster.KindSecret, Name: "app.target.cluster", Body: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "app.target.cluster", "namespace": "ls"}}}}
	for _, c := range []struct {
		name, target, server, uid string
		want                      string
	}{
		{"another API server", "landscaper", "https://cluster-a.example:6443", "", "were written to https://cluster-a.example:6443"},
		{"another cluster at the same URL", "landscaper", server, "uid-of-cluster-a", "its UID is uid-of-cluster-b, not uid-of-cluster-a"},
		{"a namespace no longer readable", "unreadable", unreadable, "uid-of-cluster-a", "may no longer read the namespace ls"},
	} {
		t.Run(c.name, func(t *testing.T) {
			moved := &remoteState{Target: c.target, Namespace: "ls", Owner: "owner", Server: strings.ToLower(c.server), NamespaceUID: c.uid,
				Objects: records}
			if w, ps := x.recordedWriter(t.Context(), moved); w != nil || !strings.Contains(strings.Join(strings.Fields(fmt.Sprint(ps)), " "), c.want) {
				t.Errorf("a writer of another cluster: %v, %v", w, ps)
			}
			got, priv, _ := x.readRemote(t.Context(), state, storedInstallation{Remote: moved})
			if got.IsNull() || !got.Equal(state) || priv != nil {
				t.Errorf("a refresh on another cluster changed the state: null %v, private %s", got.IsNull(), priv)
			}
		})
	}
	for _, c := range []struct{ target, server, uid string }{
		{"landscaper", server, "uid-of-cluster-b"}, {"landscaper", server, ""}, {"unreadable", unreadable, ""},
	} {
		same := &remoteState{Target: c.target, Namespace: "ls", Server: strings.ToLower(c.server), NamespaceUID: c.uid}
		if w, ps := x.recordedWriter(t.Context(), same); w == nil || ps.errors() {
			t.Errorf("the cluster the objects were written to (%s, namespace UID %q recorded) is refused: %v", c.server, c.uid, ps)
		}
	}
}

// A state of an earlier build recorded no namespace UID: a refresh that
// finds the resource's own Installation (its owner annotation) records
// it, and one that finds another owner's or none does not.
func TestRemoteRefreshRecordsTheNamespaceUID(t *testing.T) {
	for _, c := range []struct{ name, owner, want string }{
		{"own Installation", "owner-1", "uid-1"},
		{"no Installation", "", ""},
		{"another owner's Installation", "owner-2", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			server := fakeLandscaperCluster(t, "uid-1", c.owner)
			kubeconfig := "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n    server: " + server +
				"\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\nusers:\n- name: u\n  user: {token: t0k3n-abcdef}\n"
			x := newProvider("test").installations
			pt := &providerTargets{known: true, byName: map[string]*deployer.Target{"landscaper": {Type: target.KubernetesClusterType,
				Config: []byte(`{"kubeconfig":` + strconv.Quote(kubeconfig) + `}`)}}}
			x.targets = func() *providerTargets { return pt }
			state := tftypes.NewValue(x.t, remoteFields(t, x, map[string]any{
				"name": "app", attrLandscaperCluster: map[string]any{"target": "landscaper", "namespace": "ls"},
			}))
			old := &remoteState{Target: "landscaper", Namespace: "ls", Owner: "owner-1", Server: strings.ToLower(server),
				Objects: []lscluster.Object{{Kind: lscluster.KindSecret, Name: "app.target.cluster", Body: map[string]any{"apiVersion": "v1",
					"kind": "Secret", "metadata": map[string]any{"name": "app.target.cluster", "namespace": "ls"}}}}}
			_, priv, ps := x.readRemote(t.Context(), state, storedInstallation{Status: &installation.Status{Phase: "Succeeded",
				JobID: "j1", JobIDFinished: "j1"}, Remote: old})
			got := ""
			if priv != nil {
				saved, err := decodeInstallationPrivate(priv)
				if err != nil {
					t.Fatal(err)
				}
				got = saved.Remote.NamespaceUID
			}
			if got != c.want {
				t.Errorf("the refresh recorded namespace UID %q, want %q (%v)", got, c.want, ps)
			}
		})
	}
}

// The provider's component_overwrites shape what a plan renders, so the
// Context handed to Landscaper names a ComponentVersionOverwrites holding
// them: without it Landscaper resolved other component versions than the
// plan showed (the second remote review's R7).
func TestRemoteHandsComponentOverwritesToLandscaper(t *testing.T) {
	p := newProvider("test")
	x := p.installations
	pt := &providerTargets{known: true, byName: map[string]*deployer.Target{
		"landscaper": {Type: "landscaper.gardener.cloud/kubernetes-cluster", Config: []byte(`{"kubeconfig":"x"}`)}}}
	x.targets = func() *providerTargets { return pt }
	x.allowed = func() *allowedDeployers { return nil }
	overwrites := []ocm.Overwrite{{Source: ocm.OverwriteRef{ComponentName: "example.com/monitoring", Version: "v2.1.0"},
		Substitution: ocm.OverwriteRef{Version: "v2.2.0"}}}
	x.overwrites = func() []ocm.Overwrite { return overwrites }
	bp, err := render.Load(context.Background(), render.Source{Filesystem: map[string]string{
		"blueprint.yaml": "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n"}}, render.Options{Deployers: p.deployers})
	if err != nil {
		t.Fatal(err)
	}
	// The component's blueprint, as the registry would give it.
	x.load = func(context.Context, render.Source) (installation.Blueprint, error) { return bp, nil }
	f := remoteFields(t, x, map[string]any{
		"name": "app",
		"component": map[string]any{"name": "example.com/app", "version": "1.0.0",
			attrRepositoryContext: map[string]any{"type": "OCIRegistry", "baseUrl": "registry.example/ocm"}},
		attrLandscaperCluster: map[string]any{"target": "landscaper", "namespace": "ls"},
	})
	run, ps := x.renderRemote(context.Background(), f, pt)
	if ps.errors() || run == nil {
		t.Fatalf("renderRemote: %v", ps)
	}
	var held, named string
	for _, o := range run.objs {
		switch o.Kind {
		case lscluster.KindOverwrites:
			b, _ := json.Marshal(o.Body)
			held = o.Name + " " + string(b)
		case lscluster.KindContext:
			named, _ = o.Body["componentVersionOverwrites"].(string)
		}
	}
	if !strings.Contains(held, "v2.2.0") || named == "" || !strings.HasPrefix(held, named+" ") {
		t.Errorf("the Context names overwrites %q; the overwrites written: %s", named, held)
	}
}

// The pull secret carries the registry password as the dockerconfig's
// auth (base64 of user:password): a message quoting it, or the password
// base64-encoded, is masked at apply, refresh and destroy alike (the
// third remote review's RR3-3).
func TestRemotePullSecretAuthIsMasked(t *testing.T) {
	creds := map[string]lscluster.RegistryAuth{"registry.example:5000": {Username: "robot", Password: "s3cret-registry-pw-4711"}}
	auth := base64.StdEncoding.EncodeToString([]byte("robot:s3cret-registry-pw-4711"))
	b64pw := base64.StdEncoding.EncodeToString([]byte("s3cret-registry-pw-4711"))
	msg := `pulling: {"auths":{"registry.example:5000":{"auth":"` + auth + `"}}} pw64=` + b64pw
	run := &remoteRun{sec: masking.NewTree(), credentials: registrySecrets(creds)}
	if got := run.mask(msg); strings.Contains(got, auth) || strings.Contains(got, b64pw) {
		t.Errorf("apply shows the pull secret: %s", got)
	}
	sec := masking.NewTree()
	for _, c := range registrySecrets(creds) {
		sec.AddText(c)
	}
	if got := sec.Text(msg); strings.Contains(got, auth) || strings.Contains(got, b64pw) {
		t.Errorf("refresh or destroy shows the pull secret: %s", got)
	}
}

// A move back in-process is checked again at apply, before Landscaper lets
// go (the third remote review's RR3-4): with imports other than the last
// apply's (the plan cannot check them when another resource's output,
// unknown until then, feeds them), and with an object written to the
// Landscaper cluster changed since the last refresh (none read with
// -refresh=false), nothing is released. The cluster holds the
// resource's Installation, Succeeded, and none of the objects recorded.
func TestRemoteMoveBackIsCheckedAtApply(t *testing.T) {
	server := fakeLandscaperCluster(t, "uid-1", "owner-1")
	x, bp := installationsAt(t, server, noImportsBlueprint)
	pt := x.targets()
	f := remoteFields(t, x, map[string]any{"name": "app", "blueprint": map[string]any{"path": "bp"}})
	f["imports"] = tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"greeting": tftypes.String}},
		map[string]tftypes.Value{"greeting": tftypes.NewValue(tftypes.String, "changed")})
	imp, _, _ := importsOf(f, pt)
	secret := lscluster.Object{Kind: lscluster.KindSecret, Name: "app.import.password", Body: map[string]any{"apiVersion": "v1",
		"kind": "Secret", "metadata": map[string]any{"name": "app.import.password", "namespace": "ls"}}}
	for _, c := range []struct {
		name    string
		input   string
		objects []lscluster.Object
		want    string
	}{
		{"other imports", "the last apply's input", nil, "differ from those of the last apply"},
		{"an object changed since the refresh", installation.InputHash(bp, imp), []lscluster.Object{secret}, "changed outside Terraform (Secret/app.import.password)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			rs := &remoteState{Target: "landscaper", Namespace: "ls", Owner: "owner-1", Server: strings.ToLower(server),
				NamespaceUID: "uid-1", Input: c.input, Objects: c.objects}
			prior := tftypes.NewValue(x.t, f)
			r := &jobRun[storedInstallation]{ctx: ctx, prior: prior, private: []byte("prior"), f: maps.Clone(f),
				saved: storedInstallation{Status: &installation.Status{Phase: core.PhaseSucceeded, JobID: "j1", JobIDFinished: "j1"}, Remote: rs}}
			got, priv, ps := x.applyLeaving(r)
			detail := strings.Join(strings.Fields(fmt.Sprint(ps)), " ")
			if !ps.errors() || !strings.Contains(detail, "Cannot move back in-process") || !strings.Contains(detail, c.want) {
				t.Errorf("the move back was not refused with %q: %s", c.want, detail)
			}
			if !got.Equal(prior) || string(priv) != "prior" {
				t.Errorf("a refused move back changed the state")
			}
		})
	}
}

// An Installation deleted outside Terraform, and one of the name written
// by another owner since (another state, a Landscaper user): the refresh
// keeps the resource while an object it wrote is left (a target
// kubeconfig Secret here), so that a destroy deletes it; dropped, nothing
// would (the hostile review's RR4-1). A move back under way keeps what
// Landscaper let go of whatever Installation is there. Objects another
// owner wrote are not this resource's to keep.
func TestRemoteRefreshKeepsOwnObjectsLeft(t *testing.T) {
	secret := lscluster.Object{Kind: lscluster.KindSecret, Name: "app.target.cluster", Body: map[string]any{"apiVersion": "v1",
		"kind": "Secret", "metadata": map[string]any{"name": "app.target.cluster", "namespace": "ls"}, "data": map[string]any{"config": "***"}}}
	inst := lscluster.Object{Kind: lscluster.KindInstallation, Name: "app", Body: map[string]any{"apiVersion": lscluster.GroupVersion.String(),
		"kind": "Installation", "metadata": map[string]any{"name": "app", "namespace": "ls"}}}
	for _, c := range []struct {
		name, instOwner, secretOwner string
		released                     bool
		kept                         bool
		drifted                      []string
	}{
		{"another owner's Installation, own Secret left", "owner-of-b", "owner-1", false, true, []string{"Installation/app"}},
		{"another owner's Installation, a move back under way", "owner-of-b", "", true, true, nil},
		{"another owner's Installation and Secret", "owner-of-b", "owner-of-b", false, false, nil},
		{"no Installation, own Secret left", "", "owner-1", false, true, []string{"Installation/app"}},
		{"no Installation, another owner's Secret", "", "owner-of-b", false, false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			server := fakeCluster{uid: "uid-1", owner: c.instOwner, secretOwner: c.secretOwner}.serve(t)
			x, _ := installationsAt(t, server, noImportsBlueprint)
			state := tftypes.NewValue(x.t, remoteFields(t, x, map[string]any{
				"name": "app", attrLandscaperCluster: map[string]any{"target": "landscaper", "namespace": "ls"},
			}))
			rs := &remoteState{Target: "landscaper", Namespace: "ls", Owner: "owner-1", Server: strings.ToLower(server), NamespaceUID: "uid-1",
				Objects: []lscluster.Object{secret, inst}}
			if c.released {
				rs.Released = map[string]*deployer.Adoption{}
			}
			got, priv, ps := x.readRemote(t.Context(), state, storedInstallation{Status: &installation.Status{Phase: "Succeeded",
				JobID: "j1", JobIDFinished: "j1"}, Remote: rs})
			detail := strings.Join(strings.Fields(fmt.Sprint(ps)), " ")
			if got.IsNull() == c.kept {
				t.Fatalf("kept %v, want %v: %s", !got.IsNull(), c.kept, detail)
			}
			if !c.kept || c.released {
				return
			}
			if !strings.Contains(detail, "Secret/app.target.cluster") {
				t.Errorf("the warning does not name the object left: %s", detail)
			}
			saved, err := decodeInstallationPrivate(priv)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(saved.Remote.Drifted, c.drifted) || saved.Remote.Owner != "owner-1" {
				t.Errorf("drifted %v (want %v), owner %q", saved.Remote.Drifted, c.drifted, saved.Remote.Owner)
			}
		})
	}
}

// A move back in-process is refused when a Secret the provider wrote to
// the Landscaper cluster holds other data there (a sensitive import here,
// a target kubeconfig alike): Landscaper may have deployed from it, and
// the job here would adopt what it deployed. The records' Secret data is
// masked, so only comparing with what the configuration writes tells it
// (the hostile review's RR4-2).
func TestRemoteMoveBackRefusesChangedSecretData(t *testing.T) {
	spec := lscluster.Spec{Namespace: "ls", Name: "app", Files: map[string][]byte{"blueprint.yaml": []byte("x")},
		SecretData: map[string]any{"password": "s3cr3t-as-written"}}
	objs, err := spec.Objects()
	if err != nil {
		t.Fatal(err)
	}
	var secret lscluster.Object
	for _, o := range objs {
		if o.Kind == lscluster.KindSecret {
			secret = o
		}
	}
	data := func(v string) string {
		other := spec
		other.SecretData = map[string]any{"password": v}
		objs, _ := other.Objects()
		for _, o := range objs {
			if o.Key() == secret.Key() {
				raw, _ := json.Marshal(o.Body["data"])
				return string(raw)
			}
		}
		t.Fatal("no Secret rendered")
		return ""
	}
	for _, c := range []struct {
		name, live string
		refused    bool
	}{
		{"as written", "s3cr3t-as-written", false},
		{"changed on the cluster", "s3cr3t-changed", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			server := fakeCluster{uid: "uid-1", owner: "owner-1", secretOwner: "owner-1",
				secretData: map[string]string{secret.Name: data(c.live)}}.serve(t)
			x, bp := installationsAt(t, server, "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n"+
				"imports:\n- name: password\n  type: data\n  schema: {type: string}\n")
			f := remoteFields(t, x, map[string]any{"name": "app", "blueprint": map[string]any{"path": "bp"}})
			f[attrSensitiveImports] = tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"password": tftypes.String}},
				map[string]tftypes.Value{"password": tftypes.NewValue(tftypes.String, "s3cr3t-as-written")})
			imp, _, _ := importsOf(f, x.targets())
			rs := &remoteState{Target: "landscaper", Namespace: "ls", Owner: "owner-1", Server: strings.ToLower(server),
				NamespaceUID: "uid-1", Input: installation.InputHash(bp, imp), Objects: []lscluster.Object{secret.Record()}}
			w, _ := x.recordedWriter(t.Context(), rs)
			if w == nil {
				t.Fatal("no writer")
			}
			r := &jobRun[storedInstallation]{ctx: t.Context(), prior: tftypes.NewValue(x.t, f), f: maps.Clone(f),
				saved: storedInstallation{Status: &installation.Status{Phase: core.PhaseSucceeded, JobID: "j1", JobIDFinished: "j1"}, Remote: rs}}
			ps := x.leaveRechecked(r, w, x.remoteSecrets(f))
			detail := strings.Join(strings.Fields(fmt.Sprint(ps)), " ")
			if ps.errors() != c.refused || (c.refused && !strings.Contains(detail, "changed outside Terraform ("+secret.Key()+")")) {
				t.Errorf("refused %v, want %v: %s", ps.errors(), c.refused, detail)
			}
			if strings.Contains(detail, "s3cr3t") {
				t.Errorf("the refusal shows a secret: %s", detail)
			}
		})
	}
}

// A namespace that cannot be read for a server error (not missing, not
// forbidden) does not tell the cluster: refused, and a refresh keeps the
// state, where it passed before and a refresh read whatever cluster
// answers at the URL (the hostile review's RR4-5).
func TestRemoteUnreadableNamespaceIsRefused(t *testing.T) {
	server := fakeCluster{uid: "uid-1", namespaceError: http.StatusServiceUnavailable}.serve(t)
	x, _ := installationsAt(t, server, noImportsBlueprint)
	state := tftypes.NewValue(x.t, remoteFields(t, x, map[string]any{
		"name": "app", attrLandscaperCluster: map[string]any{"target": "landscaper", "namespace": "ls"},
	}))
	rs := &remoteState{Target: "landscaper", Namespace: "ls", Owner: "owner-1", Server: strings.ToLower(server), NamespaceUID: "uid-1",
		Objects: []lscluster.Object{{Kind: lscluster.KindSecret, Name: "app.target.cluster", Body: map[string]any{"apiVersion": "v1",
			"kind": "Secret", "metadata": map[string]any{"name": "app.target.cluster", "namespace": "ls"}}}}}
	w, ps := x.recordedWriter(t.Context(), rs)
	if detail := strings.Join(strings.Fields(fmt.Sprint(ps)), " "); w != nil || !strings.Contains(detail, "try again") {
		t.Errorf("an unreadable namespace passed: %v, %s", w, detail)
	}
	got, priv, _ := x.readRemote(t.Context(), state, storedInstallation{Remote: rs})
	if got.IsNull() || !got.Equal(state) || priv != nil {
		t.Errorf("a refresh that cannot tell the cluster changed the state: null %v, private %s", got.IsNull(), priv)
	}
}
