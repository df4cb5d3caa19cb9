// Command reclaimshape writes upstream KAI's "many" reclaim benchmark shape as a kai-sim
// scenario, to time the whole simulator on it (docs/performance.md):
//
//	go run ./hack/reclaimshape --nodes 1000 > /tmp/many-1000.yaml
//	go build -o /tmp/kai-sim ./cmd/kai-sim && /usr/bin/time /tmp/kai-sim --until 2m /tmp/many-1000.yaml
//
// N nodes of 8 GPUs; 8N one-GPU jobs of a queue that deserves nothing (over-quota weight 0)
// fill them at the start; 8N one-GPU jobs of a queue that deserves 8N GPUs arrive a second
// later and reclaim all of them.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
)

func main() {
	nodes := flag.Int("nodes", 100, "nodes of 8 GPUs")
	flag.Parse()
	if *nodes <= 0 {
		fmt.Fprintln(os.Stderr, "reclaimshape: --nodes must be positive")
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	gpus := 8 * *nodes
	for n := range *nodes {
		fmt.Fprintf(w, "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-%05d}\nstatus:\n  allocatable: {cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"8\"}\n", n)
	}
	queues := []struct {
		name           string
		quota, weight  int
		submit, prefix string
	}{{"borrower", 0, 0, "0s", "borrowed"}, {"owner", gpus, 1, "1s", "owned"}}
	for _, q := range queues {
		fmt.Fprintf(w, "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: %s}\nspec:\n  resources:\n    gpu: {quota: %d, overQuotaWeight: %d, limit: -1}\n    cpu: {quota: -1, overQuotaWeight: 1, limit: -1}\n    memory: {quota: -1, overQuotaWeight: 1, limit: -1}\n", q.name, q.quota, q.weight)
	}
	for _, q := range queues {
		for j := range gpus {
			fmt.Fprintf(w, "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata:\n  name: %s-%05d\n  namespace: %s\n  annotations: {sim.kai.scheduler/submit-at: %s}\nspec: {minMember: 1, queue: %s}\n", q.prefix, j, q.name, q.submit, q.name)
			fmt.Fprintf(w, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s-%05d-0, namespace: %s, annotations: {pod-group-name: %s-%05d}}\nspec:\n  containers:\n  - name: main\n    image: worker\n    resources: {requests: {cpu: \"1\", nvidia.com/gpu: \"1\"}}\n", q.prefix, j, q.name, q.prefix, j)
		}
	}
	if err := w.Flush(); err != nil { // the first error of the writes above, kept by w
		fmt.Fprintln(os.Stderr, "reclaimshape:", err)
		os.Exit(1)
	}
}
