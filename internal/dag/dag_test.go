package dag

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// chain a <- b <- c plus a lone d: b waits for a, c for b.
func testGraph() *Graph {
	g := New([]string{"a", "b", "c", "d"})
	g.Wait(1, 0)
	g.Wait(2, 1)
	return g
}

type recorder struct {
	mu      sync.Mutex
	order   []string
	running int
	peak    int
}

func (r *recorder) runner(g *Graph, fail map[string]bool, slots chan struct{}) Runner[bool] {
	return Runner[bool]{
		Slots: slots,
		Run: func(_ context.Context, i int) bool {
			r.mu.Lock()
			r.running++
			r.peak = max(r.peak, r.running)
			r.mu.Unlock()
			r.mu.Lock()
			r.running--
			r.mu.Unlock()
			return !fail[g.Name(i)]
		},
		Finish: func(i int, ok bool) bool {
			r.order = append(r.order, g.Name(i))
			return ok
		},
	}
}

func TestDriveRunsInDependencyOrder(t *testing.T) {
	g := testGraph()
	var r recorder
	out := Drive(context.Background(), g, r.runner(g, nil, make(chan struct{}, 1)))
	if len(out.Failed) != 0 || len(out.NotTriggered(g)) != 0 {
		t.Fatalf("outcome %+v", out)
	}
	pos := func(n string) int { return slices.Index(r.order, n) }
	if pos("a") > pos("b") || pos("b") > pos("c") || len(r.order) != 4 {
		t.Fatalf("order %v", r.order)
	}
	if r.peak > 1 {
		t.Fatalf("one slot, but %d ran at once", r.peak)
	}
}

func TestDriveStopsTriggeringAfterAFailure(t *testing.T) {
	g := testGraph()
	var r recorder
	// d is independent and may start before a's failure is recorded;
	// what waits for a never does.
	out := Drive(context.Background(), g, r.runner(g, map[string]bool{"a": true}, make(chan struct{}, 1)))
	if len(out.Failed) != 1 || g.Name(out.Failed[0]) != "a" {
		t.Fatalf("failed %v", out.Failed)
	}
	if got := out.NotTriggered(g); !slices.Contains(got, "b") || !slices.Contains(got, "c") {
		t.Fatalf("not triggered %v", got)
	}
}

func TestDriveReportsBlockedNodes(t *testing.T) {
	g := New([]string{"a", "b"})
	g.Block(1)
	var r recorder
	out := Drive(context.Background(), g, r.runner(g, nil, nil))
	if got := out.NotTriggered(g); !slices.Equal(got, []string{"b"}) || len(out.Failed) != 0 {
		t.Fatalf("outcome %+v", out)
	}
}

func TestDriveStartsNothingAfterCancel(t *testing.T) {
	g := testGraph()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var r recorder
	out := Drive(ctx, g, r.runner(g, nil, make(chan struct{}, 2)))
	if len(out.NotTriggered(g)) != 4 {
		t.Fatalf("triggered after cancel: %+v", out)
	}
}
