// Command runlocal (make run-local) starts a local cluster that needs no Docker: etcd and
// kube-apiserver from ./bin, KWOK (./bin/kwok) playing two 8-GPU nodes, the CRDs, the
// default PriorityClasses and queues, and the scheduler itself, with the Helm chart's
// configuration and its ConfigMap (where kubectl kai explain reads it). Every port it opens
// at a fixed address is checked before anything starts; --check-ports checks them alone, so
// that make run-local tells a busy port before its slow first build. It then shows reclaim min-runtime at
// work: a research job borrows every GPU, production asks for them back, and the reclaim
// waits until the research job has run its minimum. It prints what happens and the kubectl
// and kubectl kai commands to look for yourself; Ctrl-C stops every process it started.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
)

func main() {
	// The scheduler's own logs would drown the demo's story; -v style logs stay off.
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command: it parses args and runs the demo, or with --check-ports only checks
// its ports, and returns the exit code.
func run(ctx context.Context, args []string, out, errOut io.Writer) int {
	flags := flag.NewFlagSet("runlocal", flag.ContinueOnError)
	flags.SetOutput(errOut)
	opts := demoOptions{Out: out, Clock: clock.RealClock{}}
	flags.DurationVar(&opts.MinRuntime, "min-runtime", 2*time.Minute, "reclaimMinRuntime of the research queue")
	flags.DurationVar(&opts.BurstAfter, "burst-after", 20*time.Second, "how long after research starts production asks for its GPUs")
	flags.StringVar(&opts.Dir, "dir", filepath.Join("_output", "local"), "where to write the kubeconfig and KWOK's log")
	flags.StringVar(&opts.MetricsAddress, "metrics-address", "127.0.0.1:18080", "where the scheduler serves Prometheus /metrics (0: nowhere)")
	flags.StringVar(&opts.HealthAddress, "health-address", "0", "where the scheduler serves /healthz and /readyz, such as 127.0.0.1:18081 (0: nowhere)")
	// make run-local runs the check first, with the same flags, so that a busy port is told
	// before the first build of kubectl, kube-apiserver and etcd, which takes minutes.
	check := flags.Bool("check-ports", false, "only check that the ports the other flags choose are free, and exit: non-zero, naming each busy port and the flag that moves it, when one is not")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	var err error
	if *check {
		err = checkPorts(opts.listeners())
	} else {
		err = runDemo(ctx, opts)
	}
	if err != nil {
		fmt.Fprintln(errOut, "run-local:", err)
		return 1
	}
	return 0
}
