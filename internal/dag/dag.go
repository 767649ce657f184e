// Package dag runs the nodes of a dependency graph in order: a node starts
// once every node it waits for has finished successfully, independent nodes
// run concurrently, and after a failure nothing new starts. The engine
// drives deploy items with it, and installations drive sibling
// sub-installations with the same code.
package dag

import (
	"context"
	"slices"
)

// Graph is the part of a dependency graph one Drive works on. pending
// counts, per node, the nodes it still waits for; next lists who waits for
// a node. Keeping counts instead of re-classifying every node on every
// event keeps a drive linear in nodes and edges.
type Graph struct {
	names   []string
	index   map[string]int
	pending []int
	next    [][]int
}

// New returns a graph of the named nodes without edges.
func New(names []string) *Graph {
	g := &Graph{
		names:   names,
		index:   make(map[string]int, len(names)),
		pending: make([]int, len(names)),
		next:    make([][]int, len(names)),
	}
	for i, n := range names {
		g.index[n] = i
	}
	return g
}

// Len is the number of nodes.
func (g *Graph) Len() int { return len(g.names) }

// Name returns the name of node i.
func (g *Graph) Name(i int) string { return g.names[i] }

// Index returns the node of a name.
func (g *Graph) Index(name string) (int, bool) {
	i, ok := g.index[name]
	return i, ok
}

// Wait records that node i may start only after node k finished.
func (g *Graph) Wait(i, k int) {
	g.pending[i]++
	g.next[k] = append(g.next[k], i)
}

// Block makes node i wait for something outside the graph that will never
// finish, so it is reported as not triggered (a stuck node).
func (g *Graph) Block(i int) { g.pending[i]++ }

// Runner says how nodes are started and how their results are recorded.
type Runner[R any] struct {
	// Slots, if set, is a counting semaphore bounding how many nodes run at
	// once: a node takes a slot before it is triggered and gives it back
	// when Run returns. Run may give its slot back while it waits and take
	// one again before going on, as long as it holds one when it returns.
	Slots chan struct{}
	// Trigger is called on the driving goroutine when node i starts.
	Trigger func(i int)
	// Run does node i's work on a goroutine of its own.
	Run func(ctx context.Context, i int) R
	// Finish records node i's result on the driving goroutine, so whatever
	// it writes has a single writer. It returns false for a failure, after
	// which no further node is triggered.
	Finish func(i int, r R) bool
}

// Outcome is what a drive did.
type Outcome struct {
	// Failed lists the nodes whose Finish returned false, in finishing order.
	Failed []int
	// Triggered is set for every node that was started.
	Triggered []bool
}

// NotTriggered lists the names of the nodes that never started.
func (o Outcome) NotTriggered(g *Graph) []string {
	var out []string
	for i, t := range o.Triggered {
		if !t {
			out = append(out, g.names[i])
		}
	}
	return out
}

type result[R any] struct {
	node int
	r    R
}

// Drive is Landscaper's Progressing loop in incremental form. Finished
// nodes are classes A (succeeded) and B (failed); running ones are C; the
// ready queue is D; nodes with pending predecessors are E. It triggers D
// while there is no B and ctx is alive, waits for C to drain, and returns.
// Whatever is still in D or E was not triggered.
func Drive[R any](ctx context.Context, g *Graph, run Runner[R]) Outcome {
	n := len(g.names)
	out := Outcome{Triggered: make([]bool, n)}
	ready := make([]int, 0, n)
	for i := range n {
		if g.pending[i] == 0 {
			ready = append(ready, i)
		}
	}
	results := make(chan result[R], n)
	running := 0
	stopped := false
	finish := func(res result[R]) {
		running--
		if !run.Finish(res.node, res.r) {
			out.Failed = append(out.Failed, res.node)
			stopped = true
			return
		}
		for _, k := range g.next[res.node] {
			if g.pending[k]--; g.pending[k] == 0 {
				ready = append(ready, k)
			}
		}
	}
	for {
		if ctx.Err() != nil {
			stopped = true
		}
		if !stopped && len(ready) > 0 {
			if run.Slots != nil {
				// A free slot is taken before any result is read: the
				// nodes ready now are triggered together, as Landscaper
				// triggers all of D in one pass, so a node that fails at
				// once does not keep its ready siblings from starting.
				select {
				case run.Slots <- struct{}{}:
				default:
					select {
					case run.Slots <- struct{}{}:
					case r := <-results:
						finish(r)
						continue
					case <-ctx.Done():
						continue
					}
				}
				// select picks at random among ready cases: a slot may
				// come with a stop, and then nothing must start.
				if ctx.Err() != nil {
					<-run.Slots
					continue
				}
			}
			i := ready[0]
			ready = ready[1:]
			out.Triggered[i] = true
			running++
			if run.Trigger != nil {
				run.Trigger(i)
			}
			go func() {
				r := run.Run(ctx, i)
				if run.Slots != nil {
					<-run.Slots
				}
				results <- result[R]{node: i, r: r}
			}()
			continue
		}
		if running == 0 {
			return out
		}
		finish(<-results)
	}
}

// FindCycle returns one cycle among the named nodes as a closed path (the
// first name repeated at the end), or nil. deps lists what a node waits
// for; names outside the set and a node naming itself are ignored, since
// callers report those on their own.
func FindCycle(names []string, deps func(name string) []string) []string {
	const (
		unvisited = iota
		onPath
		done
	)
	state := make(map[string]int, len(names))
	for _, n := range names {
		state[n] = unvisited
	}
	var path, found []string
	var visit func(n string) bool
	visit = func(n string) bool {
		state[n] = onPath
		path = append(path, n)
		ds := slices.Clone(deps(n))
		slices.Sort(ds)
		for _, d := range ds {
			st, known := state[d]
			if !known || d == n {
				continue
			}
			switch st {
			case onPath:
				i := slices.Index(path, d)
				found = append(slices.Clone(path[i:]), d)
				return true
			case unvisited:
				if visit(d) {
					return true
				}
			}
		}
		path = path[:len(path)-1]
		state[n] = done
		return false
	}
	for _, n := range slices.Sorted(slices.Values(names)) {
		if state[n] == unvisited && visit(n) {
			return found
		}
	}
	return nil
}
