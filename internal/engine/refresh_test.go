package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// driftFake reports drift for the items in drifted and fails the check
// for those in broken.
type driftFake struct {
	*fakeDeployer
	drifted, broken map[string]bool
}

func (d driftFake) Drift(_ context.Context, req deployer.Request, last deployer.Result) (string, error) {
	if string(last.ProviderStatus) != `{"ok":true}` {
		return "", errors.New("the last result was not handed over")
	}
	switch {
	case d.broken[req.Item]:
		return "", errors.New("cannot look")
	case d.drifted[req.Item]:
		return "object deleted", nil
	}
	return "", nil
}

func TestRefreshRecordsDriftAndTheNextJobRunsOnlyDriftedItems(t *testing.T) {
	h := newHarness(2)
	df := driftFake{fakeDeployer: h.d, drifted: map[string]bool{"b": true}, broken: map[string]bool{"c": true}}
	h.e.Deployers.Register(df, "fake")
	ex := exec(map[string]ItemSpec{"a": item(""), "b": item("", "a"), "c": item("")})
	st := h.e.Reconcile(context.Background(), ex, Status{}, h.run("j1"))
	if !st.Succeeded() {
		t.Fatalf("phase %s", st.Phase)
	}
	refreshed, changed := h.e.Refresh(context.Background(), "ex", st)
	if !changed || refreshed.Items["b"].Drift != "object deleted" || refreshed.Items["a"].Drift != "" || refreshed.Items["c"].Drift != "" {
		t.Fatalf("changed %v drift %+v", changed, refreshed.Items)
	}
	if st.Items["b"].Drift != "" {
		t.Fatal("Refresh must not modify its input")
	}
	if !refreshed.Drifted() || PlanJob(ex, refreshed).Noop() {
		t.Fatal("a drifted item must make the next job run")
	}
	if p := PlanJob(ex, refreshed); len(p.Run) != 1 || p.Run[0] != "b" {
		t.Fatalf("plan runs %v, want only b", p.Run)
	}
	before := len(h.d.callList())
	again := h.e.Apply(context.Background(), ex, refreshed, h.run("j2"))
	if calls := h.d.callList()[before:]; len(calls) != 1 || calls[0] != "Reconcile:b" {
		t.Fatalf("calls %v", calls)
	}
	if again.Drifted() || !again.Succeeded() {
		t.Fatalf("after repair: drift %v phase %s", again.Drifted(), again.Phase)
	}
	// Items that did not succeed are not checked: there is nothing to drift from.
	failed := again.Clone()
	failed.Items["b"].Phase = core.PhaseFailed
	if _, changed := h.e.Refresh(context.Background(), "ex", failed); changed {
		t.Fatal("a failed item was checked for drift")
	}
}

// An item kept at rest with its config withheld is not checked for
// drift: the kept config is not what it ran with.
func TestRefreshSkipsWithheldItems(t *testing.T) {
	h := newHarness(0)
	h.e.Deployers.Register(driftFake{fakeDeployer: h.d, drifted: map[string]bool{"a": true}}, "fake")
	st := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"a": item("")}), Status{}, h.run("j1"))
	st.Items["a"].Spec.Withheld = true
	if _, changed := h.e.Refresh(context.Background(), "ex", st); changed {
		t.Error("a withheld item was checked for drift")
	}
}
