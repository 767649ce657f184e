package installation

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/mock"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
)

// adoptRecorder is the mock deployer, recording which DeployItem each
// call was told to adopt.
type adoptRecorder struct {
	*mock.Deployer
	mu    sync.Mutex
	calls map[string][]string // "<operation>:<execution>/<item>" -> Adopt.DeployItem ("" for none)
}

func (a *adoptRecorder) note(req deployer.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	from := ""
	if req.Adopt != nil {
		from = req.Adopt.DeployItem
	}
	k := string(req.Operation) + ":" + req.Execution + "/" + req.Item
	a.calls[k] = append(a.calls[k], from)
}

func (a *adoptRecorder) Reconcile(ctx context.Context, req deployer.Request) (deployer.Result, error) {
	a.note(req)
	return a.Deployer.Reconcile(ctx, req)
}

func (a *adoptRecorder) Delete(ctx context.Context, req deployer.Request) (deployer.Result, error) {
	a.note(req)
	return a.Deployer.Delete(ctx, req)
}

// The first apply of an imported tree hands each rendered item, in the
// root and in nested sub-installations, what it takes over; items that
// are no longer rendered are dropped without a call; the second apply
// adopts nothing.
func TestAnImportedTreeAdoptsOnItsFirstApply(t *testing.T) {
	rec := &adoptRecorder{Deployer: mock.New(), calls: map[string][]string{}}
	reg := deployer.NewRegistry()
	reg.Register(rec, "mock")
	r := &Runner{Engine: engine.New(reg, 4), Name: "root"}
	prev := Adopting(map[string]*deployer.Adoption{
		"item":        {DeployItem: "di-root"},
		"a/item":      {DeployItem: "di-a"},
		"b/deep/item": {DeployItem: "di-deep"},
		"b/gone":      {DeployItem: "di-gone"},
		"c/item":      nil, // a container item: nothing to adopt
	})
	imp := Imports{Data: map[string]any{"v": "hello"}}
	st := r.Apply(context.Background(), diamond(), imp, prev)
	if !st.Succeeded() {
		t.Fatalf("phase %s: %v", st.Phase, st.LastError)
	}
	adopted := map[string]string{}
	for k, froms := range rec.calls {
		if len(froms) != 1 {
			t.Fatalf("%s called %d times", k, len(froms))
		}
		adopted[k] = froms[0]
	}
	want := map[string]string{}
	for path, from := range map[string]string{"": "di-root", "a": "di-a", "b": "", "b/deep": "di-deep", "c": "", "d": ""} {
		want["Reconcile:"+r.executionName(path)+"/item"] = from
	}
	if !maps.Equal(adopted, want) {
		t.Fatalf("calls adopted %v, want %v", adopted, want)
	}
	var left []string
	st.Walk(func(path string, s *Status) {
		for name, is := range s.Execution.Items {
			if is.Adopt != nil {
				left = append(left, Join(path, name))
			}
		}
		if _, ok := s.Execution.Items["gone"]; ok {
			t.Errorf("%s: the item it no longer renders is still in the status", path)
		}
	})
	if len(left) > 0 {
		t.Fatalf("items still adopting after success: %v", left)
	}

	clear(rec.calls)
	st = r.Apply(context.Background(), diamond(), imp, st)
	if len(rec.calls) != 0 || st.Phase != core.PhaseSucceeded {
		t.Fatalf("second apply ran %v", slices.Sorted(maps.Keys(rec.calls)))
	}
}
