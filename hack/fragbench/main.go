// Command fragbench measures how many of a cluster's GPUs each GPU placement strategy
// allocates to a GPU-sharing mix, and prints the table of docs/performance.md ("GPU sharing:
// stranded GPUs by placement strategy"):
//
//	go run ./hack/fragbench                                  # 1,200 nodes, every strategy
//	go run ./hack/fragbench -nodes 60 -strategies binpack    # a quick look
//	go run ./hack/fragbench -nodes 60 -write mix.yaml        # the mix as a kai-sim scenario
//	go run ./hack/fragbench -whole -strategies fragmentation # shares asking whole GPUs: their cost
//
// The mix (package fragbench) is a heterogeneous cluster and pods arriving one a second,
// never leaving, until they ask for 130% of its GPUs; each strategy runs it in kai-sim, and
// the table gives the share of GPUs allocated and stranded when the arrivals reach 100%, 110%
// and 130% of capacity. The figures are the same on every run of the same flags; the last
// rows, the wall time and the CPU time (user and system, the process's own, which other work
// on the machine does not stretch) of each run, differ. A bind the nodes' devices could not
// honour stops the run with the seed: it is a scheduler bug.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/fragbench"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("fragbench", flag.ContinueOnError)
	flags.SetOutput(stderr)
	nodes := flags.Int("nodes", fragbench.DefaultNodes, "nodes of the cluster")
	seed := flags.Uint64("seed", 1, "seed of the mix")
	strategies := flags.String("strategies", strings.Join(fragbench.Strategies, ","), "comma-separated values of nodeplacement's gpu argument to run")
	whole := flags.Bool("whole", false, "ask a whole GPU for every share pod (the same pods at the same times): the fill that the cost of shares is compared with")
	write := flags.String("write", "", "also write the mix as a kai-sim scenario to this file (run it with --scheduler-conf holding one strategy)")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	var chosen []string
	for _, s := range strings.Split(*strategies, ",") {
		if !slices.Contains(fragbench.Strategies, s) {
			fmt.Fprintf(stderr, "fragbench: unknown strategy %q (want %s)\n", s, strings.Join(fragbench.Strategies, ", "))
			return 2
		}
		chosen = append(chosen, s)
	}
	generate := fragbench.Generate
	if *whole {
		generate = fragbench.GenerateWhole
	}
	mix, err := generate(*nodes, *seed)
	if err != nil {
		fmt.Fprintln(stderr, "fragbench:", err)
		return 2
	}
	if *write != "" {
		if err := os.WriteFile(*write, mix.Scenario, 0o600); err != nil {
			fmt.Fprintln(stderr, "fragbench:", err)
			return 1
		}
	}
	var outcomes []*fragbench.Outcome
	for _, s := range chosen {
		fmt.Fprintf(stderr, "fragbench: running %s (%d pods on %d nodes)...\n", s, mix.Pods, mix.Nodes)
		before := cpuTime()
		o, err := fragbench.Run(context.Background(), mix, s)
		if err != nil {
			fmt.Fprintf(stderr, "fragbench: seed %d, %d nodes: %v\n", *seed, *nodes, err)
			return 1
		}
		o.CPU = cpuTime() - before
		outcomes = append(outcomes, o)
	}
	if err := fragbench.WriteTable(stdout, mix, outcomes, true); err != nil {
		fmt.Fprintln(stderr, "fragbench:", err)
		return 1
	}
	return 0
}
