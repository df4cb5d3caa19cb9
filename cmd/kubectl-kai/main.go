// Command kubectl-kai is a kubectl plugin: on the PATH, `kubectl kai explain podgroup
// NAMESPACE/NAME` and `kubectl kai explain queue NAME` explain how the scheduler treats a job
// or a queue (see package kubectlkai).
package main

import (
	"context"
	"os"

	"k8s.io/utils/clock"

	"github.com/kai-minruntime/kai-scheduler/pkg/kubectlkai"
)

func main() {
	os.Exit(kubectlkai.Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, kubectlkai.Connect, clock.RealClock{}))
}
