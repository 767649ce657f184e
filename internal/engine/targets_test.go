package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// A provider's target counts in an item's hash by where it points: a new
// credential changes nothing, another server does.
func TestHashOfProviderTargetIsWhereItPoints(t *testing.T) {
	spec := func(cfg, loc string) ItemSpec {
		s := item("")
		s.Target = &deployer.Target{Name: "c", Ref: "prod", Type: "k", Config: json.RawMessage(cfg), Location: loc}
		return s
	}
	if spec(`{"token":"a"}`, "https://a").Hash() != spec(`{"token":"b"}`, "https://a").Hash() {
		t.Error("a new credential changes the hash of an item on a provider target")
	}
	if spec("", "https://a").Hash() == spec("", "https://b").Hash() {
		t.Error("another server does not change the hash")
	}
	inline := item("")
	inline.Target = &deployer.Target{Name: "c", Type: "k", Config: json.RawMessage(`{"token":"a"}`)}
	other := inline
	other.Target = &deployer.Target{Name: "c", Type: "k", Config: json.RawMessage(`{"token":"b"}`)}
	if inline.Hash() == other.Hash() {
		t.Error("an inline target's config does not count")
	}
}

// The engine hands a deployer the provider's config of a referenced
// target for its call only; the recorded spec keeps none. An undefined
// one fails the item, naming it.
func TestProviderTargetsResolvedForTheCallOnly(t *testing.T) {
	h := newHarness(0)
	var seen []string
	h.e.Deployers.Register(targetRecorder{seen: &seen}, "rec")
	h.e.Targets = func(ref string) (*deployer.Target, bool) {
		if ref != "prod" {
			return nil, false
		}
		return &deployer.Target{Config: json.RawMessage(`{"token":"s3cr3t"}`)}, true
	}
	ex := exec(map[string]ItemSpec{
		"a": {Type: "rec", Config: json.RawMessage(`{}`), Target: &deployer.Target{Name: "c", Ref: "prod", Type: "k", Location: "https://a"}},
	})
	st := h.e.Reconcile(context.Background(), ex, Status{}, h.run("job-1"))
	if st.Phase != core.PhaseSucceeded || len(seen) != 1 || seen[0] != `{"token":"s3cr3t"}` {
		t.Fatalf("phase %s, deployer saw %v", st.Phase, seen)
	}
	if b, _ := json.Marshal(st); strings.Contains(string(b), "s3cr3t") {
		t.Errorf("the status holds the provider target's config: %s", b)
	}
	ex.Items["a"] = ItemSpec{Type: "rec", Config: json.RawMessage(`{"v":2}`), Target: &deployer.Target{Name: "c", Ref: "gone", Type: "k"}}
	st = h.e.Reconcile(context.Background(), ex, st, h.run("job-2"))
	if e := st.Items["a"].LastError; e == nil || e.Reason != "TargetNotDefined" || !strings.Contains(e.Message, `"gone"`) {
		t.Errorf("an undefined provider target: %+v", e)
	}
}

// An execution with an item whose type Allowed refuses fails before
// anything runs, not even the deletion of orphans.
func TestAllowedRefusesBeforeAnythingRuns(t *testing.T) {
	h := newHarness(0)
	prev := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"old": item("")}), Status{}, h.run("job-1"))
	h.e.Allowed = func(typ string) error {
		if typ == "fake" {
			return errors.New("not allowed")
		}
		return nil
	}
	before := len(h.d.callList())
	st := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"new": item("")}), prev, h.run("job-2"))
	if st.Phase != core.PhaseFailed || st.LastError == nil || st.LastError.Reason != "DeployerNotAllowed" ||
		!strings.Contains(st.LastError.Message, `deploy item "new"`) {
		t.Fatalf("phase %s, error %+v", st.Phase, st.LastError)
	}
	if calls := h.d.callList(); len(calls) != before {
		t.Errorf("a refused execution ran %v", calls[before:])
	}
}

// A type Allowed no longer lists may not delete either: an orphan of that
// type fails the reconcile before anything runs, and a destroy fails
// before any item is deleted; the refused items stay in the status, so
// nothing is forgotten.
func TestAllowedRefusesDeletes(t *testing.T) {
	h := newHarness(0)
	prev := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"old": item(""), "keep": item("")}), Status{}, h.run("job-1"))
	if prev.Phase != core.PhaseSucceeded {
		t.Fatalf("setup: %s", prev.Phase)
	}
	h.e.Allowed = func(typ string) error {
		if typ == "fake" {
			return errors.New("not allowed")
		}
		return nil
	}
	before := len(h.d.callList())
	// The orphan's type is refused; the items kept run nothing.
	st := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"keep": item("")}), prev, h.run("job-2"))
	if st.Phase != core.PhaseFailed || st.LastError == nil || st.LastError.Reason != "DeployerNotAllowed" ||
		!strings.Contains(st.LastError.Message, `deploy item "old" cannot be deleted: not allowed`) {
		t.Fatalf("orphan: phase %s, error %+v", st.Phase, st.LastError)
	}
	if st.Items["old"] == nil {
		t.Error("the refused orphan left the status")
	}
	st = h.e.Destroy(context.Background(), "x", prev, h.run("job-3"))
	if st.Phase != core.PhaseDeleteFailed || st.LastError == nil || st.LastError.Reason != "DeployerNotAllowed" ||
		st.LastError.Operation != core.OperationDelete || len(st.Items) != 2 {
		t.Fatalf("destroy: phase %s, error %+v, items %d", st.Phase, st.LastError, len(st.Items))
	}
	if calls := h.d.callList(); len(calls) != before {
		t.Errorf("refused deletes called the deployer: %v", calls[before:])
	}
}

type targetRecorder struct{ seen *[]string }

func (targetRecorder) Validate(json.RawMessage) error { return nil }
func (r targetRecorder) Reconcile(_ context.Context, req deployer.Request) (deployer.Result, error) {
	*r.seen = append(*r.seen, string(req.Target.Config))
	return deployer.Result{}, nil
}
func (targetRecorder) Delete(context.Context, deployer.Request) (deployer.Result, error) {
	return deployer.Result{}, nil
}

// An item whose stored config is withheld is deleted only by a
// deployer.Sealer; otherwise the delete is refused before anything runs.
func TestWithheldItemsNeedASealerToBeDeleted(t *testing.T) {
	h := newHarness(0)
	prev := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"old": item(""), "keep": item("")}), Status{}, h.run("job-1"))
	prev.Items["old"].Spec.Withheld = true
	before := len(h.d.callList())
	st := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"keep": item("")}), prev, h.run("job-2"))
	if st.LastError == nil || st.LastError.Reason != "ConfigWithheld" || !strings.Contains(st.LastError.Message, `"old"`) {
		t.Fatalf("orphan: %+v", st.LastError)
	}
	st = h.e.Destroy(context.Background(), "x", prev, h.run("job-3"))
	if st.Phase != core.PhaseDeleteFailed || st.LastError == nil || st.LastError.Reason != "ConfigWithheld" {
		t.Fatalf("destroy: %s %+v", st.Phase, st.LastError)
	}
	if calls := h.d.callList(); len(calls) != before {
		t.Errorf("refused deletes called the deployer: %v", calls[before:])
	}
	h.e.Deployers.Register(sealingFake{h.d}, "fake")
	if st = h.e.Destroy(context.Background(), "x", prev, h.run("job-4")); len(st.Items) != 0 {
		t.Errorf("a Sealer's withheld item was not deleted: %+v", st.LastError)
	}
}

type sealingFake struct{ *fakeDeployer }

func (sealingFake) Seal([]byte) []byte { return nil }
