package helm

import (
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/app"
)

// The chart carries the CRD of every kind of this project's groups that the scheduler watches
// (app.Watched: Queue, PodGroup, Topology) in crds/, where Helm installs it on the first
// install (and never upgrades it: README). Without the Topology CRD the scheduler would run
// without topologies, warning that it cannot honour their constraints.
func TestTheChartInstallsTheCRDOfEveryKindTheSchedulerWatches(t *testing.T) {
	objects, err := Template("--include-crds")
	if err != nil {
		t.Fatal(err)
	}
	watched, err := app.Watched()
	if err != nil {
		t.Fatal(err)
	}
	crds := 0
	for _, r := range watched {
		if r.Group == "" || strings.HasSuffix(r.Group, ".k8s.io") {
			continue // built into Kubernetes
		}
		crds++
		if Find(objects, "CustomResourceDefinition", r.String()) == nil {
			t.Errorf("the scheduler watches %s, whose CRD the chart does not install", r)
		}
	}
	if crds < 3 {
		t.Errorf("only %d watched kinds have a CRD of this project; Watched is %v", crds, watched)
	}
}
