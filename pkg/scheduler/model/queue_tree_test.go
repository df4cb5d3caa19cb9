package model

import (
	"fmt"
	"reflect"
	"testing"
)

func queues(parents map[string]string) []*QueueInfo {
	var list []*QueueInfo
	for name, parent := range parents {
		list = append(list, &QueueInfo{Name: name, Parent: parent})
	}
	return list
}

func TestQueueTreeProblems(t *testing.T) {
	tests := []struct {
		name    string
		parents map[string]string
		want    []QueueProblem
	}{
		{"a sound tree has no problems",
			map[string]string{"root": "", "a": "root", "b": "root", "leaf": "a"}, nil},
		{"a missing parent makes an orphan and invalidates its subtree",
			map[string]string{"orphan": "gone", "child": "orphan", "grandchild": "child", "fine": ""},
			[]QueueProblem{
				{"child", `ancestor queue "orphan" is invalid`},
				{"grandchild", `ancestor queue "child" is invalid`},
				{"orphan", `parent queue "gone" does not exist`},
			}},
		{"a queue that is its own parent",
			map[string]string{"self": "self"},
			[]QueueProblem{{"self", "parent cycle: self -> self"}}},
		{"a cycle marks its members and the queues below it",
			map[string]string{"a": "c", "b": "a", "c": "b", "under": "b", "fine": ""},
			[]QueueProblem{
				{"a", "parent cycle: a -> c -> b -> a"},
				{"b", "parent cycle: a -> c -> b -> a"},
				{"c", "parent cycle: a -> c -> b -> a"},
				{"under", `ancestor queue "b" is invalid`},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := NewQueueTree(queues(tt.parents))
			if got := tree.Problems(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestQueueTreeAncestryAndChildren(t *testing.T) {
	tree := NewQueueTree(queues(map[string]string{"a": "", "b": "a", "c": "b", "d": "b", "leaf1": "c"}))
	if got, want := tree.Ancestry("leaf1"), []string{"a", "b", "c", "leaf1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Ancestry(leaf1) = %v, want %v", got, want)
	}
	if got, want := tree.Get("b").Children, []string{"c", "d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("children of b = %v, want %v", got, want)
	}
	if !tree.Get("d").IsLeaf() || tree.Get("b").IsLeaf() {
		t.Error("d is a leaf, b is not")
	}
	if tree.Ancestry("missing") != nil {
		t.Error("an unknown queue has no ancestry")
	}
}

// TestQueueTreeLongChainTerminates guards the linear-time walk: a 10,000-deep chain closed
// into one cycle must be decided without revisiting queues.
func TestQueueTreeLongChainTerminates(t *testing.T) {
	const n = 10000
	var list []*QueueInfo
	for i := range n {
		list = append(list, &QueueInfo{Name: fmt.Sprintf("q%05d", i), Parent: fmt.Sprintf("q%05d", (i+1)%n)})
	}
	tree := NewQueueTree(list)
	if got := len(tree.Problems()); got != n {
		t.Fatalf("%d problems, want all %d queues in the cycle", got, n)
	}
	// Open the chain: now it is one deep valid path.
	list[n-1].Parent = ""
	tree = NewQueueTree(list)
	if problems := tree.Problems(); len(problems) != 0 {
		t.Fatalf("unexpected problems %v", problems[:1])
	}
	if got := len(tree.Ancestry("q00000")); got != n {
		t.Fatalf("ancestry length %d, want %d", got, n)
	}
}

// Ancestries are laid out once per tree and shared: asking costs nothing, and a reader that
// appends to one cannot overwrite another queue's.
func TestAncestriesAreSharedAndSealed(t *testing.T) {
	tree := NewQueueTree(queues(map[string]string{"root": "", "a": "root", "b": "root", "leaf": "a", "orphan": "gone"}))
	for name, want := range map[string][]string{"leaf": {"root", "a", "leaf"}, "b": {"root", "b"}, "root": {"root"},
		"orphan": nil, "missing": nil} {
		if got := tree.Ancestry(name); !reflect.DeepEqual(got, want) {
			t.Errorf("Ancestry(%s) = %v, want %v", name, got, want)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = tree.Ancestry("leaf") }); allocs != 0 {
		t.Errorf("%v allocations per ancestry", allocs)
	}
	_ = append(tree.Ancestry("a"), "written")
	_ = append(tree.Ancestry("b"), "written")
	if got := tree.Ancestry("leaf"); !reflect.DeepEqual(got, []string{"root", "a", "leaf"}) {
		t.Errorf("an append to another ancestry changed leaf's: %v", got)
	}
	if got := tree.Ancestry("root"); !reflect.DeepEqual(got, []string{"root"}) {
		t.Errorf("an append to another ancestry changed root's: %v", got)
	}
}
