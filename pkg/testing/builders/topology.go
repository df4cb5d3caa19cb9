package builders

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/kai/v1alpha1"
)

// MakeTopology is a Topology whose levels are the node labels given, widest first; a label
// may carry its alias after "=" ("example.com/rack=rack").
func MakeTopology(name string, levels ...string) *v1alpha1.Topology {
	t := &v1alpha1.Topology{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, l := range levels {
		label, alias, _ := strings.Cut(l, "=")
		t.Spec.Levels = append(t.Spec.Levels, v1alpha1.TopologyLevel{NodeLabel: label, Alias: alias})
	}
	return t
}
