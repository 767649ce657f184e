package installation

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/mock"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
)

// fakeBP is a blueprint whose node exports what its one mock item exports:
// the imports it got under "in", plus a marker, so data flow is visible.
type fakeBP struct {
	id     string
	subs   []Sub
	fail   bool  // the item fails
	bad    error // Render fails
	digest string
}

func (b *fakeBP) Digest() string { return b.id + b.digest }

func (b *fakeBP) Render(_ context.Context, in Input) (*Rendered, error) {
	if b.bad != nil {
		return nil, b.bad
	}
	cfg := map[string]any{"export": map[string]any{"by": b.id, "in": in.Imports.Data}}
	if b.fail {
		cfg["phase"] = "Failed"
	}
	raw, _ := json.Marshal(cfg)
	return &Rendered{
		Items: map[string]engine.ItemSpec{"item": {Type: "mock", Config: raw, UpdateOnChangeOnly: true, Timeout: engine.DefaultTimeout}},
		Subs:  b.subs,
		State: map[string][]byte{"deploy/main": []byte(`{"n":1}`)},
	}, nil
}

func (b *fakeBP) Exports(_ context.Context, in Input, v ExportValues) (Exports, error) {
	return Exports{Data: map[string]any{"out": v.DeployItems["item"], "objects": v.DataObjects}}, nil
}

// sub builds a sub-installation importing data objects (import name ->
// object name) and exporting "out" as the object named export.
func sub(name string, bp Blueprint, export string, imports map[string]string) Sub {
	s := Sub{Name: name, Blueprint: bp, DataImports: imports}
	if export != "" {
		s.DataExports = map[string]string{"out": export}
	}
	return s
}

type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) observe(ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

// order lists "<path>:<phase>" for the installation phases in events.
func (r *recorder) phases(phase core.Phase) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Item == nil && e.Phase == phase {
			out = append(out, e.Path)
		}
	}
	return out
}

func (r *recorder) gone() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Item == nil && e.Gone {
			out = append(out, e.Path)
		}
	}
	return out
}

func newRunner() (*Runner, *recorder) {
	reg := deployer.NewRegistry()
	reg.Register(mock.New(), "mock")
	rec := &recorder{}
	return &Runner{Engine: engine.New(reg, 4), Name: "root", Observe: rec.observe}, rec
}

// diamond: a exports x; b and c import x and export y, z; d imports y and z.
func diamond() *fakeBP {
	leaf := &fakeBP{id: "leaf"}
	return &fakeBP{id: "root", subs: []Sub{
		sub("d", &fakeBP{id: "d"}, "", map[string]string{"y": "y", "z": "z"}),
		sub("b", &fakeBP{id: "b", subs: []Sub{sub("deep", leaf, "", map[string]string{"v": "v"})}}, "y", map[string]string{"x": "x"}),
		sub("c", &fakeBP{id: "c"}, "z", map[string]string{"x": "x"}),
		sub("a", &fakeBP{id: "a"}, "x", map[string]string{"v": "v"}),
	}}
}

func TestApplyRunsSiblingsInDataFlowOrderAndCollectsExports(t *testing.T) {
	r, rec := newRunner()
	st := r.Apply(context.Background(), diamond(), Imports{Data: map[string]any{"v": "hello"}}, nil)
	if !st.Succeeded() {
		t.Fatalf("phase %s: %v", st.Phase, st.LastError)
	}
	done := rec.phases(core.PhaseSucceeded)
	pos := func(p string) int { return slices.Index(done, p) }
	for _, edge := range [][2]string{{"a", "b"}, {"a", "c"}, {"b", "d"}, {"c", "d"}, {"b/deep", "b"}, {"d", ""}} {
		if pos(edge[0]) < 0 || pos(edge[0]) > pos(edge[1]) {
			t.Fatalf("%s must succeed before %s: %v", edge[0], edge[1], done)
		}
	}
	// d imported b's and c's exports, which imported a's, which imported v.
	got, _ := json.Marshal(st.Subs["d"].Exports.Data["out"])
	want := `{"by":"d","in":{"y":{"by":"b","in":{"x":{"by":"a","in":{"v":"hello"}}}},"z":{"by":"c","in":{"x":{"by":"a","in":{"v":"hello"}}}}}}`
	if string(got) != want {
		t.Fatalf("d exported %s\nwant %s", got, want)
	}
	objects, _ := st.Exports.Data["objects"].(map[string]any)
	if len(objects) != 4 || objects["x"] == nil || objects["v"] != "hello" {
		t.Fatalf("root export execution saw data objects %v", objects)
	}
	// One job ID, handed down to every node and execution.
	st.Walk(func(path string, s *Status) {
		if s.JobID != st.JobID || s.JobIDFinished != st.JobID || s.Execution.JobID != st.JobID {
			t.Errorf("%q: job %s finished %s execution %s, want %s", path, s.JobID, s.JobIDFinished, s.Execution.JobID, st.JobID)
		}
	})
	if deps := st.Subs["d"].DependsOn; !slices.Equal(deps, []string{"b", "c"}) {
		t.Fatalf("d depends on %v", deps)
	}

	p, err := PlanTree(context.Background(), diamond(), Imports{Data: map[string]any{"v": "hello"}}, st, "", nil)
	if err != nil || !p.Noop || !p.AllKnown() {
		t.Fatalf("plan after success: noop %v err %v", p.Noop, err)
	}
	p, err = PlanTree(context.Background(), diamond(), Imports{Data: map[string]any{"v": "changed"}}, st, "", nil)
	if err != nil || p.Noop || p.AllKnown() {
		t.Fatalf("plan with changed imports: noop %v known %v err %v", p.Noop, p.AllKnown(), err)
	}
}

func TestAFailedSiblingStopsItsSuccessors(t *testing.T) {
	r, _ := newRunner()
	bp := diamond()
	bp.subs[3].Blueprint = &fakeBP{id: "a", fail: true}
	st := r.Apply(context.Background(), bp, Imports{Data: map[string]any{"v": 1}}, nil)
	if st.Phase != core.PhaseFailed || st.JobIDFinished != st.JobID {
		t.Fatalf("root phase %s", st.Phase)
	}
	if st.Subs["a"].Phase != core.PhaseFailed || st.Subs["a"].Execution.Items["item"].Phase != core.PhaseFailed {
		t.Fatalf("a: %s", st.Subs["a"].Phase)
	}
	for _, n := range []string{"b", "c", "d"} {
		if st.Subs[n].Phase != core.PhaseInit {
			t.Fatalf("%s ran after its predecessor failed: %s", n, st.Subs[n].Phase)
		}
	}
	if !strings.Contains(st.LastError.Message, "sub-installations in phase Failed: a") ||
		!strings.Contains(st.LastError.Message, "not run: b, c, d") {
		t.Fatalf("root error %v", st.LastError)
	}
	// The root's own execution is independent of its subs and ran.
	if st.Execution.Items["item"].Phase != core.PhaseSucceeded {
		t.Fatal("the root's execution did not run")
	}

	// Fixed: only what failed or never ran runs again.
	fixed := diamond()
	again := r.Apply(context.Background(), fixed, Imports{Data: map[string]any{"v": 1}}, st)
	if !again.Succeeded() {
		t.Fatalf("resume: %s %v", again.Phase, again.LastError)
	}
	if again.Execution.Items["item"].JobIDFinished != st.JobID {
		t.Fatal("the root's unchanged item ran again")
	}
}

func TestOrphanedSubInstallationsAreDeletedAndDestroyRunsInReverse(t *testing.T) {
	r, rec := newRunner()
	imp := Imports{Data: map[string]any{"v": 1}}
	st := r.Apply(context.Background(), diamond(), imp, nil)
	smaller := diamond()
	smaller.subs = smaller.subs[1:] // d is gone
	st = r.Apply(context.Background(), smaller, imp, st)
	if !st.Succeeded() || st.Subs["d"] != nil {
		t.Fatalf("phase %s, d %v", st.Phase, st.Subs["d"])
	}
	if gone := rec.gone(); !slices.Equal(gone, []string{"d"}) {
		t.Fatalf("gone %v", gone)
	}
	rec.events = nil
	if left := r.Destroy(context.Background(), st); left != nil {
		t.Fatalf("left after destroy: %s %v", left.Phase, left.LastError)
	}
	gone := rec.gone()
	pos := func(p string) int { return slices.Index(gone, p) }
	for _, edge := range [][2]string{{"b", "a"}, {"c", "a"}, {"b/deep", "b"}, {"a", ""}} {
		if pos(edge[0]) < 0 || pos(edge[0]) > pos(edge[1]) {
			t.Fatalf("%s must be gone before %s: %v", edge[0], edge[1], gone)
		}
	}
}

func TestPlanTimeErrorsNameTheSiblings(t *testing.T) {
	cases := map[string]struct {
		subs []Sub
		want string
	}{
		"duplicate exporter": {[]Sub{sub("p", &fakeBP{id: "p"}, "x", nil), sub("q", &fakeBP{id: "q"}, "x", nil)}, `"p" and "q" both export the data object "x"`},
		"cycle":              {[]Sub{sub("p", &fakeBP{id: "p"}, "x", map[string]string{"y": "y"}), sub("q", &fakeBP{id: "q"}, "y", map[string]string{"x": "x"})}, "cycle: p -> q -> p"},
		"render":             {[]Sub{sub("p", &fakeBP{id: "p", bad: fmt.Errorf("template deploy/x: line 3: boom")}, "", nil)}, `sub-installation "p": template deploy/x: line 3: boom`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := PlanTree(context.Background(), &fakeBP{id: "root", subs: tc.subs}, Imports{}, nil, "", nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			r, _ := newRunner()
			st := r.Apply(context.Background(), &fakeBP{id: "root", subs: tc.subs}, Imports{}, nil)
			if st.Phase != core.PhaseFailed {
				t.Fatalf("apply: %s", st.Phase)
			}
		})
	}
}

// A new reconcile trigger runs every item of the tree once more; an
// unchanged one plans nothing.
func TestReconcileTriggerRunsTheWholeTree(t *testing.T) {
	r, _ := newRunner()
	imp := Imports{Data: map[string]any{"v": 1}}
	st := r.Apply(context.Background(), diamond(), imp, nil)
	if p, err := PlanTree(context.Background(), diamond(), imp, st, "", nil); err != nil || !p.Noop {
		t.Fatalf("same trigger: noop %v err %v", p.Noop, err)
	}
	p, err := PlanTree(context.Background(), diamond(), imp, st, "again", nil)
	if err != nil || p.Noop {
		t.Fatalf("new trigger: noop %v err %v", p.Noop, err)
	}
	// Known nodes run their item; those importing from a sibling that
	// will run are known only after it ran.
	p.Walk(func(n *Plan) {
		if n.Known && len(n.Job.Run) != 1 {
			t.Errorf("%q: runs %v, want its item", n.Path, n.Job.Run)
		}
	})
	r.ReconcileTrigger = "again"
	again := r.Apply(context.Background(), diamond(), imp, st)
	again.Walk(func(path string, s *Status) {
		if s.Execution.Items["item"].JobIDFinished != again.JobID {
			t.Errorf("%q: item did not run again", path)
		}
	})
}

// A plan of a tree never run holds what each node it could render was
// rendered from and into: what the blueprint data source shows.
func TestPlanHoldsRenderedImportsAndItems(t *testing.T) {
	p, err := PlanTree(context.Background(), diamond(), Imports{Data: map[string]any{"v": "hello"}}, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]*Plan{}
	p.Walk(func(n *Plan) {
		if n.Known {
			known[n.Path] = n
		}
	})
	if root := known[""]; root == nil || root.Imports.Data["v"] != "hello" || root.Items["item"].Type != "mock" {
		t.Fatalf("root plan: %+v", root)
	}
	for path, n := range known {
		if path != "" && len(n.Items) != 1 {
			t.Errorf("%q: items %v", path, n.Items)
		}
	}
	if len(known) < 2 || known["d"] != nil {
		t.Fatalf("rendered %v: d imports from siblings that have not run", slices.Sorted(maps.Keys(known)))
	}
}

// A sealed import counts in the hash by its stand-in, never by its value:
// a stored hash says nothing of the secret, and a new stand-in (a new
// version of the secret) is a new hash.
func TestSealedImportsHashByTheirStandin(t *testing.T) {
	imp := func(pw, standin string) Imports {
		return Imports{Data: map[string]any{"user": "admin", "password": pw}, Sealed: map[string]string{"password": standin}}
	}
	if imp("one", "v1").Hash() != imp("two", "v1").Hash() {
		t.Error("the sealed value counts in the hash")
	}
	if imp("one", "v1").Hash() == imp("one", "v2").Hash() {
		t.Error("a new stand-in does not change the hash")
	}
	plain := Imports{Data: map[string]any{"user": "admin", "password": "one"}}
	if plain.Hash() == imp("one", "v1").Hash() {
		t.Error("sealing changes nothing in the hash")
	}
	// A sub-installation importing the sealed data object imports it sealed.
	sc := newScope(imp("one", "v1"), nil)
	sub, err := sc.importsOf(Sub{Name: "s", DataImports: map[string]string{"secret": "password", "name": "user"}})
	if err != nil || sub.Sealed["secret"] != "v1" || len(sub.Sealed) != 1 {
		t.Errorf("sub imports: %+v, %v", sub.Sealed, err)
	}
	// Mapped imports read every import: derived from the sealed one.
	mapped, err := sc.importsOf(Sub{Name: "m", DataImports: map[string]string{"secret": "password"},
		MapImports: func(Imports) (map[string]any, error) { return map[string]any{"joined": "x"}, nil }})
	if err != nil || mapped.Sealed["joined"] != "v1" {
		t.Errorf("mapped imports: %+v, %v", mapped.Sealed, err)
	}
	// A sibling's sealed export is sealed for whoever imports it.
	sc.add(Sub{DataExports: map[string]string{"out": "flow"}}, Exports{Data: map[string]any{"out": "x"}, Sealed: map[string]string{"out": "v1"}})
	if next, _ := sc.importsOf(Sub{DataImports: map[string]string{"in": "flow"}}); next.Sealed["in"] != "v1" {
		t.Errorf("imports of a sealed export: %+v", next.Sealed)
	}
}
