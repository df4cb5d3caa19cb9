package actions

// NodeHeap keeps node indices ordered by a comparison, best first, and knows each node's
// place, so that a node whose standing changed is moved in place instead of the whole
// order being rebuilt: searches that serve many pods alike re-rank only the nodes their
// placements change.
type NodeHeap struct {
	heap []int
	pos  []int // each node's index in heap, -1 when absent
	less func(a, b int) bool
}

// NewNodeHeap returns an empty heap over nodes 0..n-1; less(a, b) reports whether node a
// comes before node b, and must be a strict total order.
func NewNodeHeap(n int, less func(a, b int) bool) *NodeHeap {
	h := &NodeHeap{pos: make([]int, n), less: less}
	h.Reset()
	return h
}

// Reset empties the heap.
func (h *NodeHeap) Reset() {
	for i := range h.pos {
		h.pos[i] = -1
	}
	h.heap = h.heap[:0]
}

// Update puts the node in its place after its standing changed, or takes it out when
// present is false.
func (h *NodeHeap) Update(node int, present bool) {
	switch k := h.pos[node]; {
	case k < 0 && present:
		h.heap = append(h.heap, node)
		h.pos[node] = len(h.heap) - 1
		h.up(len(h.heap) - 1)
	case k >= 0 && present:
		if !h.up(k) {
			h.down(k)
		}
	case k >= 0:
		h.Remove(node)
	}
}

// Best returns the first node, or -1 when the heap is empty.
func (h *NodeHeap) Best() int {
	if len(h.heap) == 0 {
		return -1
	}
	return h.heap[0]
}

// Remove takes a node out.
func (h *NodeHeap) Remove(node int) {
	k := h.pos[node]
	if k < 0 {
		return
	}
	last := len(h.heap) - 1
	h.swap(k, last)
	h.heap = h.heap[:last]
	h.pos[node] = -1
	if k < last && !h.up(k) {
		h.down(k)
	}
}

func (h *NodeHeap) swap(a, b int) {
	h.heap[a], h.heap[b] = h.heap[b], h.heap[a]
	h.pos[h.heap[a]], h.pos[h.heap[b]] = a, b
}

// up moves the node at k towards the root while it comes before its parent; it reports
// whether it moved.
func (h *NodeHeap) up(k int) bool {
	moved := false
	for k > 0 {
		parent := (k - 1) / 2
		if !h.less(h.heap[k], h.heap[parent]) {
			break
		}
		h.swap(k, parent)
		k, moved = parent, true
	}
	return moved
}

func (h *NodeHeap) down(k int) {
	for {
		child := 2*k + 1
		if child >= len(h.heap) {
			return
		}
		if right := child + 1; right < len(h.heap) && h.less(h.heap[right], h.heap[child]) {
			child = right
		}
		if !h.less(h.heap[child], h.heap[k]) {
			return
		}
		h.swap(k, child)
		k = child
	}
}
