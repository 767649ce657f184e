package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

const noImportsBlueprint = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n"

// Objects the last apply wrote and this one no longer does (a dropped
// target import: its Target and Secret) stay, recorded, until a job of
// Landscaper for the Installation without them succeeded: the deploy items
// of its last job still deploy to that Target, and Landscaper's deployer
// reads it to delete them (hostile review RR4-8). Here the job cannot be
// started (the reconcile patch fails).
func TestRemoteApplyKeepsStaleObjectsUntilLandscaperRan(t *testing.T) {
	mem := &memCluster{objs: map[string]map[string]any{}, failReconcile: true}
	x, server := memInstallations(t, mem, noImportsBlueprint)
	f := remoteFields(t, x, map[string]any{"name": "app", "blueprint": map[string]any{"path": "bp"},
		attrLandscaperCluster: map[string]any{"target": "landscaper", "namespace": "ls"}})
	// The last apply imported the target "old": its Target and Secret,
	// and an Installation importing it.
	old := lscluster.Spec{Namespace: "ls", Name: "app", Files: map[string][]byte{"blueprint.yaml": []byte("kind: Blueprint\n")},
		Targets: map[string]lscluster.Target{"old": {Type: target.KubernetesClusterType, Config: []byte(`{"kubeconfig":"old"}`)}}}
	oldObjs, err := old.Objects()
	if err != nil {
		t.Fatal(err)
	}
	rs := &remoteState{Target: "landscaper", Namespace: "ls", Owner: "owner-1", Server: strings.ToLower(server), NamespaceUID: "uid-1",
		Trigger: triggerOf(f)}
	for _, o := range oldObjs {
		rs.Objects = append(rs.Objects, o.Record())
	}
	mem.put(oldObjs, "owner-1", func(o lscluster.Object, body map[string]any) {
		if o.Kind == lscluster.KindInstallation {
			body["status"] = map[string]any{"phase": "Succeeded", "jobID": "j1", "jobIDFinished": "j1"}
		}
	})
	st := &installation.Status{Phase: core.PhaseSucceeded, JobID: "j1", JobIDFinished: "j1"}
	r := &jobRun[storedInstallation]{ctx: t.Context(), prior: tftypes.NewValue(x.t, f), f: maps.Clone(f), saved: storedInstallation{Status: st, Remote: rs}}
	_, priv, ps := x.applyRemote(r)
	saved, err := decodeInstallationPrivate(priv)
	if err != nil || saved.Remote == nil || !saved.Remote.Unreconciled {
		t.Fatalf("want a remote state owing Landscaper's job: %v %+v %v", err, saved.Remote, ps)
	}
	oldTarget := lscluster.TargetSecret("app", "old")
	for _, kind := range []string{lscluster.KindTarget, lscluster.KindSecret} {
		o := lscluster.Object{Kind: kind, Name: oldTarget, Body: map[string]any{"metadata": map[string]any{"namespace": "ls"}}}
		if _, ok := mem.objs[objPath(o)]; !ok {
			t.Errorf("%s was deleted though Landscaper's job did not run (%v): its next job cannot delete the deploy items using it", o.Key(), ps)
		}
		if !recorded(saved.Remote, o.Key()) {
			t.Errorf("%s is no longer recorded: no later apply or destroy deletes it", o.Key())
		}
	}
	// The next plan owes the job; were the job not owed, the left
	// objects alone plan it.
	saved.Remote.Unreconciled = false
	if changed, only := saved.Remote.changedObjects(mustRender(t, x, f).objs, nil); !slices.Contains(changed, lscluster.KindTarget+"/"+oldTarget) || only {
		t.Errorf("the objects left are no change to plan a job for: %v %v", changed, only)
	}
}

func recorded(rs *remoteState, key string) bool {
	for _, o := range rs.Objects {
		if o.Key() == key {
			return true
		}
	}
	return false
}

func mustRender(t *testing.T, x *installations, f map[string]tftypes.Value) *remoteRun {
	t.Helper()
	run, ps := x.renderRemote(t.Context(), f, x.targets())
	if run == nil {
		t.Fatalf("render: %v", ps)
	}
	return run
}

// What others added to the objects since the last refresh (or with
// -refresh=false: since the last apply), which the apply takes back, is
// what Landscaper may have run with: plan and apply run its job, as they
// would had the refresh seen it, instead of taking it back silently with
// the status left as that job made it (hostile review RR4-3).
func TestRemoteApplyRunsTheJobForWhatItTakesBack(t *testing.T) {
	mem := &memCluster{objs: map[string]map[string]any{}}
	x, server := memInstallations(t, mem,
		"apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\nimports:\n- {name: replicas, type: data, schema: {type: integer}}\n")
	f := remoteFields(t, x, map[string]any{"name": "app", "blueprint": map[string]any{"path": "bp"},
		attrLandscaperCluster: map[string]any{"target": "landscaper", "namespace": "ls"}})
	f["imports"] = tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"replicas": tftypes.Number}},
		map[string]tftypes.Value{"replicas": tftypes.NewValue(tftypes.Number, 2)})
	run := mustRender(t, x, f)
	rs := &remoteState{Target: "landscaper", Namespace: "ls", Owner: "owner-1", Server: strings.ToLower(server), NamespaceUID: "uid-1",
		Trigger: triggerOf(f), Input: installation.InputHash(run.bp, run.imp)}
	for _, o := range run.objs {
		rs.Objects = append(rs.Objects, o.Record())
	}
	mem.put(run.objs, "owner-1", func(o lscluster.Object, body map[string]any) {
		if o.Kind == lscluster.KindInstallation {
			// Someone remapped the import since the last refresh, and
			// Landscaper ran it.
			spec, _ := body["spec"].(map[string]any)
			spec["importDataMappings"] = map[string]any{"replicas": 0}
			body["status"] = map[string]any{"phase": "Succeeded", "jobID": "j1", "jobIDFinished": "j1"}
		}
	})
	st := &installation.Status{Phase: core.PhaseSucceeded, JobID: "j1", JobIDFinished: "j1"}
	prior := tftypes.NewValue(x.t, f)
	saved := storedInstallation{Status: st, Remote: rs}

	var pf map[string]tftypes.Value
	_ = prior.As(&pf)
	planned, _, pps := x.planRemote(t.Context(), maps.Clone(f), pf, saved, nil)
	if pps.errors() {
		t.Fatalf("plan: %v", pps)
	}
	var plannedFields map[string]tftypes.Value
	_ = planned.As(&plannedFields)
	if plannedFields["status"].IsKnown() {
		t.Errorf("the plan keeps the status though the apply takes back importDataMappings Landscaper ran with: no job planned")
	}

	// Landscaper does not answer here: the job is started, not waited for.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	r := &jobRun[storedInstallation]{ctx: ctx, prior: prior, f: maps.Clone(f), saved: saved}
	_, _, _ = x.applyRemote(r)
	restored, reconciled := false, false
	for _, p := range mem.patches {
		restored = restored || strings.Contains(p, `"importDataMappings":null`)
		reconciled = reconciled || strings.Contains(p, lscluster.ReconcileOperation)
	}
	if !restored {
		t.Fatalf("the apply did not take back importDataMappings: patches %v", mem.patches)
	}
	if !reconciled {
		t.Errorf("the apply took back spec.importDataMappings Landscaper had run with (patches %q) and started no job: "+
			"what Landscaper deployed from them stays, and the Installation no longer shows it", mem.patches)
	}
}

// A move to the Landscaper cluster whose write fails mid-way and whose
// clean-up fails too (the connection lost) leaves objects (a sensitive
// import's Secret here) annotated with the move's owner ID: the next try
// of the move writes as the same owner and takes them over, instead of
// being refused by them for good (hostile review RR4-7).
func TestRemoteFailedMoveIsRetriedAsTheSameOwner(t *testing.T) {
	mem := &memCluster{objs: map[string]map[string]any{}, posts: 1, failPosts: true, failDelete: true}
	x, _ := memInstallations(t, mem,
		"apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\nimports:\n- {name: password, type: data, schema: {type: string}}\n")
	f := remoteFields(t, x, map[string]any{"name": "app", "blueprint": map[string]any{"path": "bp"},
		attrLandscaperCluster: map[string]any{"target": "landscaper", "namespace": "ls"}})
	f["sensitive_imports"] = tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"password": tftypes.String}},
		map[string]tftypes.Value{"password": tftypes.NewValue(tftypes.String, "s3cr3t-pw-4711")})
	run := mustRender(t, x, f)
	if run.objs[0].Kind != lscluster.KindSecret {
		t.Fatalf("the first object written is %s", run.objs[0].Key())
	}
	// In-process, Succeeded, from this configuration: the move is allowed.
	st := &installation.Status{Phase: core.PhaseSucceeded, JobID: "3f1c0e7a-job", JobIDFinished: "3f1c0e7a-job",
		InputHash: installation.InputHash(run.bp, run.imp)}
	prior := tftypes.NewValue(x.t, f)
	r := &jobRun[storedInstallation]{ctx: t.Context(), prior: prior, private: []byte("prior"), f: maps.Clone(f),
		saved: storedInstallation{Status: st}}
	_, priv, ps := x.applyRemote(r)
	if !ps.errors() || string(priv) != "prior" {
		t.Fatalf("the move did not fail, keeping the in-process state: %v", ps)
	}
	if len(mem.objs) == 0 {
		t.Fatalf("the failed move left nothing: no clean-up to test")
	}
	detail := fmt.Sprint(ps)
	if !strings.Contains(detail, "applying the move again takes them over") || strings.Contains(detail, "s3cr3t-pw-4711") {
		t.Errorf("the diagnostics do not say what the left objects become, or show the secret: %s", detail)
	}

	// The connection is back: the retry writes over what was left.
	mem.failPosts, mem.failDelete = false, false
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	r = &jobRun[storedInstallation]{ctx: ctx, prior: prior, private: []byte("prior"), f: maps.Clone(f),
		saved: storedInstallation{Status: st}}
	_, _, ps = x.applyRemote(r)
	if detail := fmt.Sprint(ps); strings.Contains(detail, "refused to overwrite") || strings.Contains(detail, "Cannot write") {
		t.Errorf("the retry of the move is refused by what the failed one left: %s", detail)
	}
	inst := lscluster.Object{Kind: lscluster.KindInstallation, Name: "app", Body: map[string]any{"metadata": map[string]any{"namespace": "ls"}}}
	if _, ok := mem.objs[objPath(inst)]; !ok {
		t.Errorf("the retry did not write the Installation: %v", ps)
	}
}

// The state of an earlier build recorded no namespace UID: an apply does
// not record that of whatever cluster answers at the URL now (here one
// holding nothing of the resource's), which would take it for the
// resource's cluster for good; a refresh that finds the resource's own
// Installation records it (the hostile review's RR4-9).
func TestRemoteApplyRecordsNoNamespaceUIDOfAnotherCluster(t *testing.T) {
	mem := &memCluster{objs: map[string]map[string]any{}, failReconcile: true}
	x, server := memInstallations(t, mem, noImportsBlueprint)
	f := remoteFields(t, x, map[string]any{"name": "app", "blueprint": map[string]any{"path": "bp"},
		attrLandscaperCluster: map[string]any{"target": "landscaper", "namespace": "ls"}})
	rs := &remoteState{Target: "landscaper", Namespace: "ls", Owner: "owner-1", Server: strings.ToLower(server), Trigger: triggerOf(f)}
	st := &installation.Status{Phase: core.PhaseSucceeded, JobID: "j1", JobIDFinished: "j1"}
	r := &jobRun[storedInstallation]{ctx: t.Context(), prior: tftypes.NewValue(x.t, f), f: maps.Clone(f), saved: storedInstallation{Status: st, Remote: rs}}
	_, priv, ps := x.applyRemote(r)
	saved, err := decodeInstallationPrivate(priv)
	if err != nil || saved.Remote == nil {
		t.Fatalf("want a remote state: %v %v", err, ps)
	}
	if saved.Remote.NamespaceUID != "" {
		t.Errorf("the apply recorded the namespace UID %q of the cluster answering now, not known to hold the resource's objects", saved.Remote.NamespaceUID)
	}
}
