package order

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// node is one doomed object as the tests write an ordering's input.
// Indexes refer to the slice of nodes passed to orderNodes.
type node struct {
	// Owner is the node of the object's owner when the owner is doomed too,
	// else -1: a surviving owner (or none) does not delay anything.
	Owner int32
	// Subscribers are the doomed subscribers of the object's onDestruction
	// records, each once, without the object itself.
	Subscribers []int32
	// Key orders nodes that tie: document order of the snapshot (the
	// object's byte offset).
	Key int
}

// orderNodes orders nodes (graph, order).
func orderNodes(nodes []node) *ordering {
	g := &graph{owner: make([]int32, len(nodes)), subEnd: make([]int32, len(nodes)), key: make([]int, len(nodes))}
	for v, nd := range nodes {
		g.owner[v], g.key[v] = nd.Owner, nd.Key
		g.subs = append(g.subs, nd.Subscribers...)
		g.subEnd[v] = int32(len(g.subs))
	}
	return order(g)
}

// muranoIndexes is a transcription, for testing, of the group index
// computation of Murano's engine (murano/dsl/object_store.py,
// ObjectStore._destroy_garbage, its nested dfs): successors are the owner
// first, then the subscribers; a successor that is not doomed has index 0.
// It walks the graph in the order of graphOrder, as the engine walks its
// dict.
func muranoIndexes(nodes []node, graphOrder []int32) []int32 {
	succ := func(v int32) []int32 {
		// The engine's list: [owner] + subscribers not already listed.
		// -1 stands for an owner that is not doomed (or none).
		s := []int32{nodes[v].Owner}
		for _, w := range nodes[v].Subscribers {
			if !slices.Contains(s, w) {
				s = append(s, w)
			}
		}
		return s
	}
	visited := map[int32]int{}
	indexes := map[int32]int32{}
	var dfs func(v int32)
	dfs = func(v int32) {
		visited[v]++
		if v < 0 {
			return // not in the graph: graph.get() is None
		}
		m := int32(0)
		for i, w := range succ(v) {
			if i == 0 || visited[w] == 0 {
				dfs(w)
			}
			if indexes[w] > m {
				m = indexes[w]
			}
		}
		if visited[v] <= 2 {
			visited[v]++
			indexes[v] = m + 1
		}
	}
	for _, v := range graphOrder {
		if visited[v] == 0 {
			dfs(v)
		}
	}
	out := make([]int32, len(nodes))
	for i := range out {
		out[i] = indexes[int32(i)]
	}
	return out
}

// randomForest returns n nodes in document order: an ownership forest
// (owners before what they own) with some owners surviving, and random
// dependency edges. With acyclic set, dependencies only point to nodes
// that cannot reach back (a random topological order is respected).
func randomForest(r *rand.Rand, n int, deps int, acyclic bool) []node {
	nodes := make([]node, n)
	for i := range nodes {
		nodes[i] = node{Owner: -1, Key: i * 10}
		if i > 0 && r.IntN(4) != 0 {
			nodes[i].Owner = int32(r.IntN(i))
		}
	}
	// In an ownership forest where owners precede owned nodes, edges from
	// a node to a node of lower position that is its ancestor... are
	// owner edges. For acyclic dependency edges use the position order:
	// every successor (owner or subscriber) has a lower position.
	for k := 0; k < deps; k++ {
		a, b := int32(r.IntN(n)), int32(r.IntN(n))
		if a == b {
			continue
		}
		if acyclic && b > a {
			a, b = b, a
		}
		if !slices.Contains(nodes[a].Subscribers, b) && nodes[a].Owner != b {
			nodes[a].Subscribers = append(nodes[a].Subscribers, b)
		}
	}
	return nodes
}

func TestOrderMatchesMuranoEngineOnAcyclicGraphs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 500; iter++ {
		n := 1 + r.IntN(60)
		nodes := randomForest(r, n, r.IntN(2*n), true)
		o := orderNodes(nodes)
		if len(o.Cycles) != 0 {
			t.Fatalf("acyclic graph reported cycles %v", o.Cycles)
		}
		graphOrder := make([]int32, n)
		for i := range graphOrder {
			graphOrder[i] = int32(i)
		}
		r.Shuffle(n, func(i, j int) { graphOrder[i], graphOrder[j] = graphOrder[j], graphOrder[i] })
		want := muranoIndexes(nodes, graphOrder)
		if !reflect.DeepEqual(o.Index, want) {
			t.Fatalf("iteration %d: indexes %v, Murano's engine computes %v for %+v", iter, o.Index, want, nodes)
		}
	}
}

func TestOrderTable(t *testing.T) {
	tests := []struct {
		name   string
		nodes  []node
		index  []int32
		groups [][]int32
		cycles [][]int32
	}{
		{
			name:   "single object whose owner survives",
			nodes:  []node{{Owner: -1}},
			index:  []int32{1},
			groups: [][]int32{{0}},
		},
		{
			// env(0) owns app(1) and net(3); app owns vm(2). A childless
			// sibling (net) shares the group of its sibling that has
			// children (app): depth from the surviving part.
			name:   "childless sibling shares its group with a sibling that has children",
			nodes:  []node{{Owner: -1, Key: 0}, {Owner: 0, Key: 1}, {Owner: 1, Key: 2}, {Owner: 0, Key: 3}},
			index:  []int32{1, 2, 3, 2},
			groups: [][]int32{{0}, {1, 3}, {2}},
		},
		{
			// vm(1) subscribes to net(0)'s destruction: net is destroyed
			// first (higher index), the subscriber after it.
			name:   "publisher before its subscriber",
			nodes:  []node{{Owner: -1, Key: 0, Subscribers: []int32{1}}, {Owner: -1, Key: 1}},
			index:  []int32{2, 1},
			groups: [][]int32{{1}, {0}},
		},
		{
			// The owner (0) subscribes to its child's (1) destruction:
			// consistent with ownership.
			name:   "owner subscribes to what it owns",
			nodes:  []node{{Owner: -1, Key: 0}, {Owner: 0, Key: 1, Subscribers: []int32{0}}},
			index:  []int32{1, 2},
			groups: [][]int32{{0}, {1}},
		},
		{
			// The child (1) subscribes to its owner's (0) destruction: a
			// cycle of an ownership edge and a dependency edge. Ownership
			// is kept: the child still goes first.
			name:   "child subscribes to its owner: ownership kept",
			nodes:  []node{{Owner: -1, Key: 0, Subscribers: []int32{1}}, {Owner: 0, Key: 1}},
			index:  []int32{1, 2},
			groups: [][]int32{{0}, {1}},
			cycles: [][]int32{{0, 1}},
		},
		{
			name: "three-way dependency cycle plus an outside subscriber",
			nodes: []node{
				{Owner: -1, Key: 30, Subscribers: []int32{1}},
				{Owner: -1, Key: 10, Subscribers: []int32{2}},
				{Owner: -1, Key: 20, Subscribers: []int32{0, 3}},
				{Owner: -1, Key: 40},
			},
			index:  []int32{1, 1, 2, 1},
			groups: [][]int32{{1, 0, 3}, {2}},
			cycles: [][]int32{{1, 2, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := orderNodes(tt.nodes)
			if !reflect.DeepEqual(o.Index, tt.index) {
				t.Errorf("Index = %v, want %v", o.Index, tt.index)
			}
			if !reflect.DeepEqual(o.Groups, tt.groups) {
				t.Errorf("Groups = %v, want %v", o.Groups, tt.groups)
			}
			if len(o.Cycles) != 0 || len(tt.cycles) != 0 {
				if !reflect.DeepEqual(o.Cycles, tt.cycles) {
					t.Errorf("Cycles = %v, want %v", o.Cycles, tt.cycles)
				}
			}
		})
	}
}

// TestOrderInvariantsWithCycles checks, on random graphs with cycles, that
// every object is in exactly one group, every owner comes after what it
// owns, every dependency not ignored is honoured, every ignored edge lies
// inside a reported cycle, and the result does not depend on the order of
// the input.
func TestOrderInvariantsWithCycles(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 300; iter++ {
		n := 1 + r.IntN(50)
		nodes := randomForest(r, n, r.IntN(3*n), false)
		o := orderNodes(nodes)
		seen := make([]int, n)
		for g, members := range o.Groups {
			for k, v := range members {
				seen[v]++
				if o.Index[v] != int32(g+1) {
					t.Fatalf("node %d in group %d has index %d", v, g+1, o.Index[v])
				}
				if k > 0 && nodes[members[k-1]].Key >= nodes[v].Key {
					t.Fatalf("group %d not in document order: %v", g+1, members)
				}
			}
		}
		inCycle := map[[2]int32]bool{}
		for _, c := range o.Cycles {
			for _, a := range c {
				for _, b := range c {
					inCycle[[2]int32{a, b}] = true
				}
			}
		}
		for v := range nodes {
			if seen[v] != 1 {
				t.Fatalf("node %d appears %d times in groups", v, seen[v])
			}
			if w := nodes[v].Owner; w >= 0 && o.Index[w] >= o.Index[v] {
				t.Fatalf("owner %d (index %d) not after owned %d (index %d)", w, o.Index[w], v, o.Index[v])
			}
			for _, w := range nodes[v].Subscribers {
				if slices.Contains(o.Ignored[int32(v)], w) {
					if !inCycle[[2]int32{int32(v), w}] {
						t.Fatalf("edge %d->%d ignored outside a cycle", v, w)
					}
					continue
				}
				if o.Index[w] >= o.Index[v] {
					t.Fatalf("subscriber %d (index %d) not after publisher %d (index %d)", w, o.Index[w], v, o.Index[v])
				}
			}
		}
		// Relabel the nodes in reverse: the same objects get the same
		// indexes and cycles.
		perm := make([]int32, n) // old -> new
		for i := range perm {
			perm[i] = int32(n - 1 - i)
		}
		rev := make([]node, n)
		for i, nd := range nodes {
			m := node{Owner: -1, Key: nd.Key}
			if nd.Owner >= 0 {
				m.Owner = perm[nd.Owner]
			}
			for _, w := range nd.Subscribers {
				m.Subscribers = append(m.Subscribers, perm[w])
			}
			rev[perm[i]] = m
		}
		o2 := orderNodes(rev)
		for i := range nodes {
			if o.Index[i] != o2.Index[perm[i]] {
				t.Fatalf("iteration %d: index of node %d depends on input order: %d vs %d", iter, i, o.Index[i], o2.Index[perm[i]])
			}
		}
		if len(o.Cycles) != len(o2.Cycles) {
			t.Fatalf("cycles depend on input order: %v vs %v", o.Cycles, o2.Cycles)
		}
		for c := range o.Cycles {
			for k := range o.Cycles[c] {
				if perm[o.Cycles[c][k]] != o2.Cycles[c][k] {
					t.Fatalf("cycle %d differs: %v vs %v", c, o.Cycles[c], o2.Cycles[c])
				}
			}
		}
	}
}

func TestOrderDeepChainDoesNotRecurse(t *testing.T) {
	const n = 1_000_000
	nodes := make([]node, n)
	for i := range nodes {
		nodes[i] = node{Owner: int32(i) - 1, Key: i}
	}
	o := orderNodes(nodes)
	if len(o.Groups) != n || o.Index[n-1] != n {
		t.Fatalf("chain of %d: %d groups, deepest index %d", n, len(o.Groups), o.Index[n-1])
	}
}

// TestOwnedFirstMatchesComponents: on ownership forests without
// dependency edges, the ordering's short way (ownedFirst) sets the same
// indexes as the components' (scc); a forest in which an owner comes after
// what it owns is left to the components.
func TestOwnedFirstMatchesComponents(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	short := 0
	for iter := 0; iter < 300; iter++ {
		n := 1 + r.IntN(80)
		nodes := randomForest(r, n, 0, true)
		if iter%3 == 0 { // reversed: owners after what they own
			slices.Reverse(nodes)
			for i := range nodes {
				if w := nodes[i].Owner; w >= 0 {
					nodes[i].Owner = int32(n-1) - w
				}
			}
		}
		g := &graph{owner: make([]int32, n), subEnd: make([]int32, n)}
		for v, nd := range nodes {
			g.owner[v] = nd.Owner
		}
		want := &ordering{Index: make([]int32, n), Ignored: map[int32][]int32{}}
		want.components(g)
		got := make([]int32, n)
		if !ownedFirst(g, got) {
			if iter%3 != 0 {
				t.Fatalf("iteration %d: a forest in document order not taken", iter)
			}
			if slices.ContainsFunc(got, func(x int32) bool { return x != 0 }) {
				t.Fatalf("iteration %d: indexes left behind %v", iter, got)
			}
			continue
		}
		short++
		if !slices.Equal(got, want.Index) {
			t.Fatalf("iteration %d: ownedFirst %v, components %v", iter, got, want.Index)
		}
	}
	if short < 200 {
		t.Fatalf("the short way taken %d times of 300", short)
	}
}
