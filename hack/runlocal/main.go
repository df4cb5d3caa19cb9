// Command runlocal (make run-local) starts a local cluster that needs no Docker: etcd and
// kube-apiserver from ./bin, KWOK (./bin/kwok) playing two 8-GPU nodes, the CRDs, the
// default PriorityClasses and queues, and the scheduler itself, with the Helm chart's
// configuration and its ConfigMap (where kubectl kai explain reads it). Every port it opens
// at a fixed address is checked before anything starts. It then shows reclaim min-runtime at
// work: a research job borrows every GPU, production asks for them back, and the reclaim
// waits until the research job has run its minimum. It prints what happens and the kubectl
// and kubectl kai commands to look for yourself; Ctrl-C stops every process it started.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

func main() {
	opts := demoOptions{}
	flag.DurationVar(&opts.MinRuntime, "min-runtime", 2*time.Minute, "reclaimMinRuntime of the research queue")
	flag.DurationVar(&opts.BurstAfter, "burst-after", 20*time.Second, "when production asks for its GPUs")
	flag.StringVar(&opts.Dir, "dir", filepath.Join("_output", "local"), "where to write the kubeconfig and KWOK's log")
	flag.StringVar(&opts.MetricsAddress, "metrics-address", "127.0.0.1:18080", "where the scheduler serves Prometheus /metrics (0: nowhere)")
	flag.StringVar(&opts.HealthAddress, "health-address", "0", "where the scheduler serves /healthz and /readyz, such as 127.0.0.1:18081 (0: nowhere)")
	flag.Parse()
	opts.Out = os.Stdout
	// The scheduler's own logs would drown the demo's story; -v style logs stay off.
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runDemo(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, "run-local:", err)
		os.Exit(1)
	}
}
