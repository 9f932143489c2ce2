package engine

import (
	"container/heap"
	"slices"
	"sort"
	"strings"
)

// The dependency graph of a workflow's steps, as pre-flight reads it:
// cycles, what is upstream of each step, and the order the steps run in.

// cycles reports every dependency cycle once, from the strongly connected
// components of the graph.
func (c *wfCheck) cycles() {
	c.comps = c.components()
	for _, comp := range c.comps {
		if len(comp) == 1 && !slices.Contains(c.deps[comp[0]], comp[0]) {
			continue
		}
		c.reportCycle(comp)
	}
}

// reportCycle reports the cycle of component comp at its earliest step:
// a step that depends on itself, or a shortest cycle through it.
func (c *wfCheck) reportCycle(comp []int) {
	start := slices.Min(comp)
	s := c.w.Steps[start]
	if len(comp) == 1 {
		c.add(s.Line, "step %q depends on itself", s.ID)
		return
	}
	path := c.cycleFrom(start, comp)
	names := make([]string, 0, len(path)+1)
	for _, i := range path {
		names = append(names, c.w.Steps[i].ID)
	}
	names = append(names, s.ID)
	c.add(s.Line, "dependency cycle: %s (each step depends on the one before it)", strings.Join(names, " -> "))
}

// components returns the strongly connected components of the dependency
// graph (Tarjan), dependencies before the steps that need them.
func (c *wfCheck) components() [][]int {
	n := len(c.w.Steps)
	t := &tarjan{deps: c.deps, index: make([]int, n), low: make([]int, n), on: make([]bool, n)}
	for i := range t.index {
		t.index[i] = -1
	}
	for v := range n {
		if t.index[v] < 0 {
			t.visit(v)
		}
	}
	return t.comps
}

// tarjan is one walk of Tarjan's algorithm over the dependency graph deps.
type tarjan struct {
	deps       [][]int
	index, low []int // -1 in index: not visited yet
	on         []bool
	stack      []int
	comps      [][]int
	next       int
}

// visit walks the graph from v, adding each component it closes to comps.
func (t *tarjan) visit(v int) {
	t.index[v], t.low[v] = t.next, t.next
	t.next++
	t.stack = append(t.stack, v)
	t.on[v] = true
	for _, w := range t.deps[v] {
		switch {
		case t.index[w] < 0:
			t.visit(w)
			t.low[v] = min(t.low[v], t.low[w])
		case t.on[w]:
			t.low[v] = min(t.low[v], t.index[w])
		}
	}
	if t.low[v] == t.index[v] {
		t.comps = append(t.comps, t.pop(v))
	}
}

// pop takes the component rooted at v off the stack, in index order.
func (t *tarjan) pop(v int) []int {
	var comp []int
	for {
		w := t.stack[len(t.stack)-1]
		t.stack = t.stack[:len(t.stack)-1]
		t.on[w] = false
		comp = append(comp, w)
		if w == v {
			break
		}
	}
	sort.Ints(comp)
	return comp
}

// cycleFrom returns a shortest cycle through start inside comp, in the
// order the run would flow (each step depends on the one before it),
// beginning with start.
func (c *wfCheck) cycleFrom(start int, comp []int) []int {
	in := map[int]bool{}
	for _, i := range comp {
		in[i] = true
	}
	// Breadth first along dependencies, so the cycle printed is a
	// shortest one.
	prev := map[int]int{start: -1}
	queue := []int{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, d := range c.deps[v] {
			if d == start {
				return cycleBack(prev, start, v)
			}
			if _, seen := prev[d]; !seen && in[d] {
				prev[d] = v
				queue = append(queue, d)
			}
		}
	}
	return []int{start}
}

// cycleBack is the cycle the breadth-first walk of cycleFrom closed at
// v, which depends on start. Following prev from v gives v, ..., x1, each
// a dependency of the next: with start before v (v depends on it) and x1
// before start, that is the cycle in run order.
func cycleBack(prev map[int]int, start, v int) []int {
	var path []int
	for x := v; x != start; x = prev[x] {
		path = append(path, x)
	}
	return append([]int{start}, path...)
}

// upstream computes, for every step, the set of steps it depends on
// directly or through others.
func (c *wfCheck) upstream() {
	n := len(c.w.Steps)
	words := (n + 63) / 64
	c.up = make([][]uint64, n)
	// Components come dependencies first, so each set is complete when a
	// step that needs it is reached. Inside a cycle every member is
	// upstream of every other.
	for _, comp := range c.comps {
		set := c.upstreamOf(comp, words)
		for _, v := range comp {
			c.up[v] = set
		}
	}
}

// upstreamOf is the set of steps upstream of every member of component
// comp, from the sets of the components before it.
func (c *wfCheck) upstreamOf(comp []int, words int) []uint64 {
	set := make([]uint64, words)
	for _, v := range comp {
		for _, d := range c.deps[v] {
			set[d/64] |= 1 << (d % 64)
			if c.up[d] != nil {
				for k := range set {
					set[k] |= c.up[d][k]
				}
			}
		}
	}
	return set
}

func (c *wfCheck) isUpstream(of, step int) bool {
	return c.up[of][step/64]&(1<<(step%64)) != 0
}

// order returns the step indexes in topological order, the earliest step in
// the file first among those whose dependencies are all placed.
func (c *wfCheck) order() []int {
	n := len(c.w.Steps)
	waiting, users := dependents(c.deps)
	ready := &wfReady{}
	for i := range n {
		if waiting[i] == 0 {
			heap.Push(ready, i)
		}
	}
	out := make([]int, 0, n)
	for ready.Len() > 0 {
		v := heap.Pop(ready).(int)
		out = append(out, v)
		for _, u := range users[v] {
			if waiting[u]--; waiting[u] == 0 {
				heap.Push(ready, u)
			}
		}
	}
	return out
}

// dependents inverts deps: how many dependencies each step waits for, and
// the steps that depend on each.
func dependents(deps [][]int) (waiting []int, users [][]int) {
	waiting = make([]int, len(deps))
	users = make([][]int, len(deps))
	for i, ds := range deps {
		waiting[i] = len(ds)
		for _, d := range ds {
			users[d] = append(users[d], i)
		}
	}
	return waiting, users
}

// wfReady is a min-heap of step indexes.
type wfReady []int

func (h wfReady) Len() int           { return len(h) }
func (h wfReady) Less(i, j int) bool { return h[i] < h[j] }
func (h wfReady) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *wfReady) Push(x any)        { *h = append(*h, x.(int)) }
func (h *wfReady) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// wfLinear reports whether every step depends exactly on the one before it.
func wfLinear(steps []PlanStep) bool {
	for i, s := range steps {
		var want []string
		if i > 0 {
			want = []string{steps[i-1].ID}
		}
		if !slices.Equal(s.DependsOn, want) {
			return false
		}
	}
	return true
}
