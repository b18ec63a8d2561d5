package destroy

import "testing"

// TestKindIndex: a plan's index of types keeps a byte an object up to 256
// types and every index through the widening past that.
func TestKindIndex(t *testing.T) {
	const n = 1000
	x := newKindIndex(n)
	want := make([]int32, n)
	for i := range n {
		k := int32(i % 300) // the 257th type widens at i == 256
		if i == 256 {
			if x.wide != nil {
				t.Fatal("widened before 256 types")
			}
		}
		x.set(i, k)
		want[i] = k
	}
	if x.wide == nil || x.narrow != nil || x.len() != n {
		t.Fatalf("not widened: %d narrow, %d wide", len(x.narrow), len(x.wide))
	}
	for i := range n {
		if x.at(i) != want[i] {
			t.Fatalf("at(%d) = %d, want %d", i, x.at(i), want[i])
		}
	}
	y := newKindIndex(3)
	y.set(2, 255)
	if y.wide != nil || y.at(2) != 255 || y.at(0) != 0 {
		t.Errorf("255 kinds: widened or lost: %+v", y)
	}
}
