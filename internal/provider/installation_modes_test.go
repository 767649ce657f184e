package provider

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
)

// movedTree is a succeeded tree run from input "in": a manifest item at
// the root with the given manifest policy, and a helm item in the
// sub-installation "sub".
func movedTree(policy string) *installation.Status {
	item := func(typ, config string) *engine.ItemStatus {
		return &engine.ItemStatus{Phase: core.PhaseSucceeded, Spec: engine.ItemSpec{Type: typ, Config: json.RawMessage(config)}}
	}
	return &installation.Status{Phase: core.PhaseSucceeded, JobID: "j", JobIDFinished: "j", InputHash: "in",
		Execution: engine.Status{Items: map[string]*engine.ItemStatus{
			"config": item("landscaper.gardener.cloud/kubernetes-manifest", `{"manifests":[{"policy":"manage","manifest":{}},{"policy":"`+policy+`","manifest":{}}]}`),
		}},
		Subs: map[string]*installation.Status{"sub": {Phase: core.PhaseSucceeded, JobID: "j", JobIDFinished: "j",
			Execution: engine.Status{Items: map[string]*engine.ItemStatus{"release": item("landscaper.gardener.cloud/helm", `{"name":"demo"}`)}}}},
	}
}

func details(ps problems) string {
	var out []string
	for _, p := range ps {
		if !p.warning {
			out = append(out, p.summary+": "+p.detail+" @"+p.path.String())
		}
	}
	return strings.Join(out, "\n")
}

// TestEnterProblems: only a succeeded tree run from the configuration it
// moves with, of items Landscaper's deployers take over (no manifest of
// policy fallback), moves to a Landscaper cluster; each refusal is on
// landscaper_cluster and says why.
func TestEnterProblems(t *testing.T) {
	if ps := enterProblems(movedTree("keep"), "in"); ps.errors() {
		t.Fatalf("a succeeded manifest and helm tree is refused:\n%s", details(ps))
	}
	failed := movedTree("manage")
	failed.Phase = core.PhaseFailed
	withExec := movedTree("manage")
	withExec.Execution.Items["script"] = &engine.ItemStatus{Phase: core.PhaseSucceeded, Spec: engine.ItemSpec{Type: "exec"}}
	for name, c := range map[string]struct {
		st    *installation.Status
		input string
		want  string
	}{
		"failed":   {failed, "in", "did not succeed (phase Failed)"},
		"changed":  {movedTree("manage"), "other", "differ from those the last in-process apply ran with"},
		"fallback": {movedTree("fallback"), "in", `Deploy item "config": manifest 1 has policy fallback`},
		"exec":     {withExec, "in", `Deploy item "script" is of type exec`},
	} {
		ps := enterProblems(c.st, c.input)
		got := details(ps)
		if !strings.Contains(got, c.want) || !strings.Contains(got, "@"+attrPath(attrLandscaperCluster).String()) {
			t.Errorf("%s: want %q on landscaper_cluster, got:\n%s", name, c.want, got)
		}
	}
}

// TestLeaveProblems: only a tree Landscaper finished with Succeeded, whose
// written objects are as written and whose inputs are those of the last
// apply, moves back in-process; a release under way always goes on.
func TestLeaveProblems(t *testing.T) {
	ok := func() *remoteState { return &remoteState{Input: "in"} }
	if ps := leaveProblems(ok(), movedTree("manage"), "in"); ps.errors() {
		t.Fatalf("a succeeded remote tree is refused:\n%s", details(ps))
	}
	running := movedTree("manage")
	running.JobID = "k"
	drifted := ok()
	drifted.Drifted = []string{"DataObject/x.import.a"}
	unreconciled := ok()
	unreconciled.Unreconciled = true
	for name, c := range map[string]struct {
		rs    *remoteState
		st    *installation.Status
		input string
		want  string
	}{
		"running":      {ok(), running, "in", "is not Succeeded on the Landscaper cluster"},
		"unreconciled": {unreconciled, movedTree("manage"), "in", "without Landscaper running a job"},
		"drifted":      {drifted, movedTree("manage"), "in", "changed outside Terraform (DataObject/x.import.a)"},
		"old":          {&remoteState{}, movedTree("manage"), "in", "did not record what it ran from"},
		"changed":      {ok(), movedTree("manage"), "other", "differ from those of the last apply on the Landscaper cluster"},
	} {
		got := details(leaveProblems(c.rs, c.st, c.input))
		if !strings.Contains(got, c.want) || !strings.Contains(got, "@"+attrPath(attrLandscaperCluster).String()) {
			t.Errorf("%s: want %q on landscaper_cluster, got:\n%s", name, c.want, got)
		}
	}
	releasing := &remoteState{Released: map[string]*deployer.Adoption{"config": {DeployItem: "x-config"}}}
	if ps := leaveProblems(releasing, running, "other"); ps.errors() {
		t.Errorf("a release under way is refused:\n%s", details(ps))
	}
}
