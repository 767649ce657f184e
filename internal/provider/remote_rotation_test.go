package provider

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/render"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

func reviewObjects(t *testing.T, ns string, secret map[string]any) []lscluster.Object {
	t.Helper()
	s := lscluster.Spec{Namespace: ns, Name: "app", Files: map[string][]byte{"blueprint.yaml": []byte("kind: Blueprint\n")},
		SecretData: secret}
	objs, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func reviewRecords(objs []lscluster.Object) *remoteState {
	rs := &remoteState{Target: "ls", Namespace: objs[0].Ref().Namespace}
	for _, o := range objs {
		rs.Objects = append(rs.Objects, o.Record())
	}
	return rs
}

// A changed sensitive import whose name holds ".target." was taken for a
// rotated target credential (the remote review's F5): the plan kept every
// computed attribute and the apply started no job. A Target's Secret is
// the one a Target of its name refers to.
func TestSensitiveImportChangeIsNoRotation(t *testing.T) {
	prev := reviewRecords(reviewObjects(t, "ls", map[string]any{"db.target.password": "old"}))
	changed, rotation := prev.changedObjects(reviewObjects(t, "ls", map[string]any{"db.target.password": "new"}),
		[]string{"Secret/app.import.db.target.password"})
	if rotation {
		t.Errorf("a changed sensitive import %v is planned as a credential rotation: no job runs", changed)
	}
}

// Moving to another namespace in place (the remote review's F6) left the
// old namespace's objects: stale objects were told by kind and name only.
func TestStaleObjectsAcrossNamespaces(t *testing.T) {
	prev := reviewRecords(reviewObjects(t, "old", nil))
	next := reviewRecords(reviewObjects(t, "new", nil))
	stale := staleObjects(prev, next)
	if len(stale) != len(prev.Objects) {
		t.Errorf("moving from namespace old to new deletes %d of the %d objects in old", len(stale), len(prev.Objects))
	}
	if same := staleObjects(prev, prev); len(same) != 0 {
		t.Errorf("nothing moved, yet %v are stale", refsOf(same))
	}
}

// A landscaper_cluster unknown at plan time (a namespace another resource
// creates in the same apply) may name another namespace or cluster: it
// replaces the resource, as a known change does, so the old Installation
// is destroyed rather than orphaned (the remote review's F6).
func TestRemotePlanReplacesOnUnknownCluster(t *testing.T) {
	rt := objectType(&installationResource{})
	ct := as[tftypes.Object](rt.AttributeTypes[attrLandscaperCluster])
	saved := storedInstallation{Status: &installation.Status{Phase: core.PhaseSucceeded},
		Remote: &remoteState{Target: "ls", Namespace: "old"}}
	for _, c := range []struct {
		name    string
		cluster tftypes.Value
		replace bool
	}{
		{"whole object unknown", tftypes.NewValue(ct, tftypes.UnknownValue), true},
		{"namespace unknown", tftypes.NewValue(ct, map[string]tftypes.Value{"target": stringValue("ls"),
			"namespace": tftypes.NewValue(tftypes.String, tftypes.UnknownValue)}), true},
		{"target unknown", tftypes.NewValue(ct, map[string]tftypes.Value{"namespace": stringValue("old"),
			"target": tftypes.NewValue(tftypes.String, tftypes.UnknownValue)}), true},
		{"another namespace", tftypes.NewValue(ct, map[string]tftypes.Value{"target": stringValue("ls"), "namespace": stringValue("new")}), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := make(map[string]tftypes.Value, len(rt.AttributeTypes))
			for n, at := range rt.AttributeTypes {
				f[n] = tftypes.NewValue(at, nil)
			}
			f["name"], f[attrLandscaperCluster] = stringValue("app"), c.cluster
			x := &installations{t: rt, targets: func() *providerTargets { return &providerTargets{known: true} },
				allowed: func() *allowedDeployers { return nil },
				load: func(context.Context, render.Source) (installation.Blueprint, error) {
					return nil, errors.New("no blueprint here")
				}}
			_, replace, _ := x.planRemote(t.Context(), f, maps.Clone(f), saved, nil)
			if got := slices.ContainsFunc(replace, func(p *tftypes.AttributePath) bool {
				return p.Equal(attrPath(attrLandscaperCluster))
			}); got != c.replace {
				t.Errorf("replace %v, want landscaper_cluster replaced: %v", replace, c.replace)
			}
		})
	}
}

// rotationKubeconfig is a kubeconfig with every field a rotation may or
// may not change; edit replaces a line of it.
const rotationKubeconfig = `apiVersion: v1
kind: Config
current-context: c
clusters:
- name: c
  cluster:
    server: https://cluster-a.example:6443
    certificate-authority-data: Q0EtQQ==
    tls-server-name: api.cluster-a
    proxy-url: http://proxy-user:proxy-pw-1@proxy.example:3128
contexts:
- name: c
  context: {cluster: c, user: u, namespace: apps}
users:
- name: u
  user:
    token: tok-1
`

// A target import's Secret changed is a rotated credential, which runs no
// job, only when nothing but the credentials changed: a target pointed at
// another cluster (another provider target, server, CA, TLS server name,
// proxy, namespace, impersonation, or a target type whose credentials the
// provider does not know) runs Landscaper's job, or its next reconcile
// would deploy there unseen (the remote review's F4, and the gap the
// second and third reviews found: only the server's host was compared).
func TestRetargetIsNoRotation(t *testing.T) {
	x := &installations{deployers: deployer.NewRegistry()}
	x.deployers.RegisterTargetLocator(target.KubernetesClusterType, target.KubernetesClusterLocation)
	objs := func(ref, typ, config string) []lscluster.Object {
		t.Helper()
		if typ == target.KubernetesClusterType {
			b, _ := json.Marshal(map[string]string{"kubeconfig": config})
			config = string(b)
		}
		tg, err := remoteTarget(&deployer.Target{Ref: ref, Type: typ, Config: json.RawMessage(config)},
			&providerTargets{known: true, byName: map[string]*deployer.Target{ref: {Type: typ, Config: json.RawMessage(config)}}},
			x.deployers.TargetLocation)
		if err != nil {
			t.Fatal(err)
		}
		s := lscluster.Spec{Namespace: "ls", Name: "app", Files: map[string][]byte{"blueprint.yaml": []byte("kind: Blueprint\n")},
			Targets: map[string]lscluster.Target{"cluster": tg}}
		o, err := s.Objects()
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	edit := func(pairs ...string) string {
		out := rotationKubeconfig
		for i := 0; i < len(pairs); i += 2 {
			if !strings.Contains(out, pairs[i]) {
				t.Fatalf("no %q in the kubeconfig", pairs[i])
			}
			out = strings.Replace(out, pairs[i], pairs[i+1], 1)
		}
		return out
	}
	const kube, vault = target.KubernetesClusterType, "example.com/vault"
	secret := []string{"Secret/app.target.cluster"}
	for _, c := range []struct {
		name             string
		ref, typ, before string
		after            string
		wantRotation     bool
	}{
		{"new token", "prod", kube, rotationKubeconfig, edit("token: tok-1", "token: tok-2"), true},
		{"client certificate instead of a token", "prod", kube, rotationKubeconfig,
			edit("token: tok-1", "client-certificate-data: Y2VydA==\n    client-key-data: a2V5"), true},
		{"user and password", "prod", kube, edit("token: tok-1", "username: admin\n    password: pw-1"),
			edit("token: tok-1", "username: root\n    password: pw-2"), true},
		{"exec plugin", "prod", kube, rotationKubeconfig, edit("token: tok-1",
			"exec: {apiVersion: client.authentication.k8s.io/v1, command: get-token, interactiveMode: Never}"), true},
		{"proxy password", "prod", kube, rotationKubeconfig, edit("proxy-user:proxy-pw-1@", "proxy-user:proxy-pw-2@"), true},
		{"another server", "prod", kube, rotationKubeconfig, edit("tok-1", "tok-2", "cluster-a.example", "cluster-b.example"), false},
		{"another CA", "prod", kube, rotationKubeconfig, edit("tok-1", "tok-2", "Q0EtQQ==", "Q0EtQg=="), false},
		{"another TLS server name", "prod", kube, rotationKubeconfig, edit("tok-1", "tok-2", "api.cluster-a", "api.cluster-b"), false},
		{"another proxy", "prod", kube, rotationKubeconfig, edit("tok-1", "tok-2", "proxy.example", "proxy-b.example"), false},
		{"TLS verification off", "prod", kube, rotationKubeconfig,
			edit("tok-1", "tok-2", "    certificate-authority-data: Q0EtQQ==\n", "    insecure-skip-tls-verify: true\n"), false},
		{"another namespace", "prod", kube, rotationKubeconfig, edit("tok-1", "tok-2", "namespace: apps", "namespace: other"), false},
		{"impersonating", "prod", kube, rotationKubeconfig, edit("token: tok-1", "token: tok-2\n    as: admin"), false},
		{"another provider target", "staging", kube, rotationKubeconfig, edit("tok-1", "tok-2"), false},
		{"inline config with another server", "", kube, rotationKubeconfig, edit("tok-1", "tok-2", "cluster-a.example", "cluster-b.example"), false},
		{"a type whose credentials are not known", "prod", vault, `{"url":"https://vault-a","token":"tok-1"}`,
			`{"url":"https://vault-b","token":"tok-2"}`, false},
		{"a kubeconfig that cannot be read", "prod", kube, "token: tok-1", "token: tok-2", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			prev := reviewRecords(objs("prod", c.typ, c.before))
			if changed, _ := prev.changedObjects(objs("prod", c.typ, c.before), nil); len(changed) > 0 {
				t.Fatalf("nothing changed, yet %v did", changed)
			}
			changed, rotation := prev.changedObjects(objs(c.ref, c.typ, c.after), secret)
			if rotation != c.wantRotation || len(changed) == 0 {
				t.Errorf("changed %v, rotation %v; want rotation %v", changed, rotation, c.wantRotation)
			}
		})
	}
}

// Records of an earlier build kept no pointing: a changed target Secret is
// then taken for a re-pointing (a job runs once, and records the
// pointing), while an unchanged one plans nothing.
func TestRotationFromRecordsWithoutPointing(t *testing.T) {
	cfg, _ := json.Marshal(map[string]string{"kubeconfig": rotationKubeconfig})
	tg, err := remoteTarget(&deployer.Target{Type: target.KubernetesClusterType, Config: cfg}, nil, func(string, json.RawMessage) string { return "https://cluster-a.example:6443" })
	if err != nil {
		t.Fatal(err)
	}
	s := lscluster.Spec{Namespace: "ls", Name: "app", Files: map[string][]byte{"blueprint.yaml": []byte("kind: Blueprint\n")},
		Targets: map[string]lscluster.Target{"cluster": tg}}
	objs, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	prev := reviewRecords(objs)
	for i, o := range prev.Objects {
		if o.Points != nil {
			old := *o.Points
			old.Pointing = ""
			prev.Objects[i].Points = &old
		}
	}
	if changed, _ := prev.changedObjects(objs, nil); len(changed) > 0 {
		t.Errorf("records without a pointing plan %v changed", changed)
	}
	if changed, rotation := prev.changedObjects(objs, []string{"Secret/app.target.cluster"}); rotation || len(changed) == 0 {
		t.Errorf("a changed target Secret against records without a pointing: changed %v, rotation %v", changed, rotation)
	}
}

// The remote spec's targets say where they point, for the records: an
// inline kubeconfig's server, as the provider's locator reads it.
func TestRemoteSpecLocatesTargets(t *testing.T) {
	x := &installations{deployers: deployer.NewRegistry()}
	x.deployers.RegisterTargetLocator(target.KubernetesClusterType, target.KubernetesClusterLocation)
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://cluster-b.example'}\n" +
		"contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: tok}\n"
	cfg, _ := json.Marshal(map[string]string{"kubeconfig": kubeconfig})
	got, err := remoteTarget(&deployer.Target{Type: target.KubernetesClusterType, Config: cfg}, nil, x.deployers.TargetLocation)
	if err != nil {
		t.Fatal(err)
	}
	if got.Location != "https://cluster-b.example" {
		t.Errorf("an inline target's location is %q", got.Location)
	}
}

// A write refused by another owner's object after other objects were
// written (lscluster.PartialWriteError) was read as "nothing was
// written": the prior state stood, and the new Secrets it wrote were in
// no record, so no destroy deleted them (third remote review, RR3-5).
func TestWriteRefusedAfterAPartialWriteIsRecorded(t *testing.T) {
	prev := reviewRecords(reviewObjects(t, "ls", map[string]any{"old": "x"}))
	notOwned := &lscluster.NotOwnedError{Objects: []string{"Installation ls/app (written by another Terraform resource)"}}

	rs := reviewRecords(reviewObjects(t, "ls", map[string]any{"new": "y"}))
	if rs.writeFailed(notOwned, prev) {
		t.Errorf("a refusal before any write is taken for a partial write")
	}
	rs = reviewRecords(reviewObjects(t, "ls", map[string]any{"new": "y"}))
	n := len(rs.Objects)
	if !rs.writeFailed(&lscluster.PartialWriteError{Written: []string{"Secret/app.import.new"}, Err: notOwned}, prev) {
		t.Fatalf("a refusal after a write is taken for nothing written")
	}
	keys := map[string]bool{}
	for _, o := range rs.Objects {
		keys[o.Key()] = true
	}
	if !rs.Unreconciled || len(rs.Objects) != n+1 || !keys["Secret/app.import.new"] || !keys["Secret/app.import.old"] {
		t.Errorf("after a partial write the state records %v (unreconciled %v), want the new and the old Secret", slices.Collect(maps.Keys(keys)), rs.Unreconciled)
	}
}
