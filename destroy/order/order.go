// Package order orders the destruction of the doomed objects of a
// comparison exactly as Murano's engine does (docs/design.md, "The
// order"): Plan holds the groups, the notifications, each object's
// reasons and successors, and the plan's warnings, which plan prints and
// apply carries out.
package order

import "sort"

// ordering is the result of order.
type ordering struct {
	// Index is each node's group index, 1 for objects nothing doomed must
	// outlive. Notification runs groups in ascending index, destruction in
	// descending index (Murano's engine, murano/dsl/object_store.py).
	Index []int32
	// Groups holds the nodes of each index, by ascending index, each group
	// in Key order. Groups[0] has index 1.
	Groups [][]int32
	// Cycles lists the strongly connected components of more than one
	// node, each in Key order, in order of their first member's Key.
	Cycles [][]int32
	// Ignored[n] lists the subscribers of n whose dependency edge was
	// ignored to break a cycle (in Subscribers order).
	Ignored map[int32][]int32
}

// graph is the ordering's input in compact form, 8 bytes a node plus 4 a
// subscriber (a struct a node with a slice of subscribers costs 40 bytes,
// and a plan's memory must stay near its input's): node v's owner is
// owner[v] (-1 for none or a survivor), its subscribers
// subs[subEnd[v-1]:subEnd[v]] (from 0 for v == 0), each once, without v
// itself or its owner. key[v] orders nodes that tie; nil means the nodes'
// own order.
type graph struct {
	owner, subEnd, subs []int32
	key                 []int
}

func (g *graph) subscribers(v int32) []int32 {
	lo := int32(0)
	if v > 0 {
		lo = g.subEnd[v-1]
	}
	return g.subs[lo:g.subEnd[v]:g.subEnd[v]]
}

// less reports whether node a comes before node b in document order.
func (g *graph) less(a, b int32) bool {
	if g.key == nil {
		return a < b
	}
	return g.key[a] < g.key[b]
}

// order computes the destruction groups of the nodes of g.
//
// The successors of a node are its owner and its subscribers. Its index is
// 1 + the largest index among doomed successors (0 for none): the depth
// from the surviving part of the model, so that an object without owned
// objects shares its group with its siblings that have some, as in Murano's
// engine. Dependency edges inside a strongly connected component are
// ignored (ownership edges are kept: ownership is a tree and cannot close a
// cycle), which makes the graph acyclic while still destroying owned
// objects before their owners; Murano leaves the order of a cycle
// undefined, objgc makes it deterministic.
func order(g *graph) *ordering {
	n := len(g.owner)
	o := &ordering{Index: make([]int32, n), Ignored: map[int32][]int32{}}
	if !ownedFirst(g, o.Index) {
		o.components(g)
	}
	maxIndex := int32(0)
	for _, x := range o.Index {
		if x > maxIndex {
			maxIndex = x
		}
	}
	counts := make([]int, maxIndex+1)
	for _, x := range o.Index {
		counts[x]++
	}
	o.Groups = make([][]int32, maxIndex)
	for k := range o.Groups {
		o.Groups[k] = make([]int32, 0, counts[k+1])
	}
	add := func(v int32) {
		k := o.Index[v] - 1
		o.Groups[k] = append(o.Groups[k], v)
	}
	if g.key == nil {
		for v := range int32(n) {
			add(v)
		}
		return o
	}
	byKey := make([]int32, n)
	for i := range byKey {
		byKey[i] = int32(i)
	}
	sort.Slice(byKey, func(a, b int) bool { return g.less(byKey[a], byKey[b]) })
	for _, v := range byKey {
		add(v)
	}
	return o
}

// ownedFirst sets index as order does when g has no subscriber edges and
// every node's owner comes before it in g's order, as a document puts an
// owner before what it owns, and reports whether it did. Ownership alone
// is a forest: no cycle, and a node's index is one more than its owner's.
// It needs none of scc's per-node arrays (a million doomed objects that
// notify nothing set the ordering's peak, not its work).
func ownedFirst(g *graph, index []int32) bool {
	if len(g.subs) != 0 {
		return false
	}
	for v, w := range g.owner {
		switch {
		case w < 0:
			index[v] = 1
		case w < int32(v) && g.less(w, int32(v)):
			index[v] = index[w] + 1
		default:
			clear(index)
			return false
		}
	}
	return true
}

// components sets o.Index, o.Cycles and o.Ignored from the strongly
// connected components of g (scc).
func (o *ordering) components(g *graph) {
	comp, flat, ends := scc(g)
	// Components come in reverse topological order: every successor's
	// component before the component itself.
	for c, end := range ends {
		var start int32
		if c > 0 {
			start = ends[c-1]
		}
		members := flat[start:end:end]
		if len(members) > 1 {
			sort.Slice(members, func(a, b int) bool { return g.less(members[a], members[b]) })
			o.Cycles = append(o.Cycles, members)
		}
		// In Key order an owner precedes what it owns, so inside a
		// component the owners' indexes are known when needed.
		for _, v := range members {
			m := int32(0)
			if w := g.owner[v]; w >= 0 {
				m = o.Index[w]
			}
			for _, w := range g.subscribers(v) {
				if comp[w] == comp[v] && len(members) > 1 {
					o.Ignored[v] = append(o.Ignored[v], w)
					continue
				}
				if o.Index[w] > m {
					m = o.Index[w]
				}
			}
			o.Index[v] = m + 1
		}
	}
	sort.Slice(o.Cycles, func(a, b int) bool { return g.less(o.Cycles[a][0], o.Cycles[b][0]) })
}

// scc returns each node's component number and the components in the
// order Tarjan's algorithm completes them (reverse topological order of the
// condensation: a component after every component it reaches): component
// c is flat[ends[c-1]:ends[c]] (from 0 for c == 0). One flat array rather
// than a slice per component: a model of a million doomed objects has about
// as many components, and a slice each would cost its header and an
// allocation per object in the plan's peak. Iterative, so that a million
// nodes do not exhaust the stack.
func scc(g *graph) (comp, flat, ends []int32) {
	n := len(g.owner)
	const unvisited = -1
	index := make([]int32, n)
	low := make([]int32, n)
	comp = make([]int32, n)
	onStack := make([]bool, n)
	flat = make([]int32, 0, n)
	// At most n components: sized once, as growing it by append leaves
	// several times its size behind as garbage.
	ends = make([]int32, 0, n)
	for i := range index {
		index[i] = unvisited
	}
	var stack []int32
	type frame struct {
		v    int32
		next int32 // next successor to visit: -1 owner, then subscribers
	}
	var call []frame
	counter := int32(0)
	succ := func(v int32, k int32) (int32, bool) {
		if k < 0 {
			return g.owner[v], true
		}
		if subs := g.subscribers(v); int(k) < len(subs) {
			return subs[k], true
		}
		return 0, false
	}
	for root := range n {
		if index[root] != unvisited {
			continue
		}
		call = append(call, frame{v: int32(root), next: -1})
		index[root], low[root] = counter, counter
		counter++
		stack = append(stack, int32(root))
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			w, ok := succ(f.v, f.next)
			if ok {
				f.next++
				if w < 0 {
					continue
				}
				if index[w] == unvisited {
					index[w], low[w] = counter, counter
					counter++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{v: w, next: -1})
				} else if onStack[w] && index[w] < low[f.v] {
					low[f.v] = index[w]
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				if p := call[len(call)-1].v; low[v] < low[p] {
					low[p] = low[v]
				}
			}
			if low[v] == index[v] {
				c := int32(len(ends))
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = c
					flat = append(flat, w)
					if w == v {
						break
					}
				}
				ends = append(ends, int32(len(flat)))
			}
		}
	}
	return comp, flat, ends
}
