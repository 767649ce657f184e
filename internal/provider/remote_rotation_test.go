package provider

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
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

// A target import pointed at another cluster (another provider target, or
// an inline config with another server) changes only the target's
// Secret, and was planned as a credential rotation: nothing ran, and
// Landscaper's next reconcile deployed to the new cluster unseen (the
// remote review's F4). Only a new credential for the same target and
// server is a rotation.
func TestRetargetIsNoRotation(t *testing.T) {
	objs := func(ref, location, token string) []lscluster.Object {
		s := lscluster.Spec{Namespace: "ls", Name: "app", Files: map[string][]byte{"blueprint.yaml": []byte("kind: Blueprint\n")},
			Targets: map[string]lscluster.Target{"cluster": {Ref: ref, Location: location, Type: "landscaper.gardener.cloud/kubernetes-cluster",
				Config: []byte(`{"kubeconfig":"token: ` + token + `"}`)}}}
		o, err := s.Objects()
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	prev := reviewRecords(objs("prod", "https://cluster-a", "tok-1"))
	secret := []string{"Secret/app.target.cluster"}
	for _, c := range []struct {
		name           string
		ref, location  string
		wantRotation   bool
		wantTargetSeen bool
	}{
		{"new token", "prod", "https://cluster-a", true, false},
		{"another server", "prod", "https://cluster-b", false, true},
		{"another provider target", "staging", "https://cluster-a", false, true},
		{"inline config with another server", "", "https://cluster-b", false, true},
	} {
		changed, rotation := prev.changedObjects(objs(c.ref, c.location, "tok-2"), secret)
		if rotation != c.wantRotation || slices.Contains(changed, "Target/app.target.cluster") != c.wantTargetSeen {
			t.Errorf("%s: changed %v, rotation %v; want rotation %v", c.name, changed, rotation, c.wantRotation)
		}
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
