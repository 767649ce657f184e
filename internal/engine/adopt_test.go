package engine

import (
	"context"
	"reflect"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// An item imported from Landscaper carries what its deployer must take
// over until it has run once successfully: a failed run adopts again next
// time, a successful one owns what it adopted and forgets the DeployItem.
func TestAdoptionReachesTheDeployerUntilTheItemSucceeds(t *testing.T) {
	h := newHarness(0)
	imported := func(spec ItemSpec, from string) *ItemStatus {
		// As an import writes it: succeeded, with no known applied spec,
		// so the first job runs it.
		return &ItemStatus{Phase: core.PhaseSucceeded, JobIDFinished: "import", Spec: spec,
			Adopt: &deployer.Adoption{DeployItem: from}}
	}
	ex := exec(map[string]ItemSpec{"a": item(""), "b": item(`{"fail":true}`), "c": item("")})
	prev := Status{Phase: core.PhaseSucceeded, JobID: "import", JobIDFinished: "import", Items: map[string]*ItemStatus{
		"a": imported(ex.Items["a"], "hello-di-a"),
		"b": imported(ex.Items["b"], "hello-di-b"),
	}}
	if p := PlanJob(ex, prev); !reflect.DeepEqual(p.Run, []string{"a", "b", "c"}) {
		t.Fatalf("plan after import runs %v, want every item", p.Run)
	}
	st := h.e.Reconcile(context.Background(), ex, prev, h.run("j1"))
	want := map[string][]string{"Reconcile:a": {"hello-di-a"}, "Reconcile:b": {"hello-di-b"}, "Reconcile:c": {""}}
	if !reflect.DeepEqual(h.d.adopted, want) {
		t.Fatalf("deployers were told to adopt %v, want %v", h.d.adopted, want)
	}
	if st.Items["a"].Adopt != nil || st.Items["a"].Phase != core.PhaseSucceeded {
		t.Errorf("a succeeded but still adopts: %+v", st.Items["a"])
	}
	if a := st.Items["b"].Adopt; a == nil || a.DeployItem != "hello-di-b" {
		t.Fatalf("b failed and forgot what to adopt: %+v", st.Items["b"])
	}

	fixed := exec(map[string]ItemSpec{"a": item(""), "b": item(""), "c": item("")})
	st = h.e.Reconcile(context.Background(), fixed, st, h.run("j2"))
	if got := h.d.adopted["Reconcile:b"]; !reflect.DeepEqual(got, []string{"hello-di-b", "hello-di-b"}) {
		t.Fatalf("b's retry adopted %v", got)
	}
	if !st.Succeeded() || st.Items["b"].Adopt != nil {
		t.Fatalf("after the retry: %+v, b %+v", st, st.Items["b"])
	}
}
