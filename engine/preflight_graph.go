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
		start := slices.Min(comp)
		s := c.w.Steps[start]
		if len(comp) == 1 {
			c.add(s.Line, "step %q depends on itself", s.ID)
			continue
		}
		path := c.cycleFrom(start, comp)
		names := make([]string, 0, len(path)+1)
		for _, i := range path {
			names = append(names, c.w.Steps[i].ID)
		}
		names = append(names, s.ID)
		c.add(s.Line, "dependency cycle: %s (each step depends on the one before it)", strings.Join(names, " -> "))
	}
}

// components returns the strongly connected components of the dependency
// graph (Tarjan), dependencies before the steps that need them.
func (c *wfCheck) components() [][]int {
	n := len(c.w.Steps)
	index := make([]int, n)
	low := make([]int, n)
	on := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var comps [][]int
	next := 0
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		for _, w := range c.deps[v] {
			switch {
			case index[w] < 0:
				visit(w)
				low[v] = min(low[v], low[w])
			case on[w]:
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var comp []int
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			on[w] = false
			comp = append(comp, w)
			if w == v {
				break
			}
		}
		sort.Ints(comp)
		comps = append(comps, comp)
	}
	for v := range n {
		if index[v] < 0 {
			visit(v)
		}
	}
	return comps
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
				// Following prev from v gives v, ..., x1, each a dependency
				// of the next: with start before v (v depends on it) and
				// x1 before start, that is the cycle in run order.
				var path []int
				for x := v; x != start; x = prev[x] {
					path = append(path, x)
				}
				return append([]int{start}, path...)
			}
			if _, seen := prev[d]; !seen && in[d] {
				prev[d] = v
				queue = append(queue, d)
			}
		}
	}
	return []int{start}
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
		for _, v := range comp {
			c.up[v] = set
		}
	}
}

func (c *wfCheck) isUpstream(of, step int) bool {
	return c.up[of][step/64]&(1<<(step%64)) != 0
}

// order returns the step indexes in topological order, the earliest step in
// the file first among those whose dependencies are all placed.
func (c *wfCheck) order() []int {
	n := len(c.w.Steps)
	waiting := make([]int, n)
	users := make([][]int, n)
	for i, ds := range c.deps {
		waiting[i] = len(ds)
		for _, d := range ds {
			users[d] = append(users[d], i)
		}
	}
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
		if i == 0 && len(s.DependsOn) != 0 {
			return false
		}
		if i > 0 && (len(s.DependsOn) != 1 || s.DependsOn[0] != steps[i-1].ID) {
			return false
		}
	}
	return true
}
