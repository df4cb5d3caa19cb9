package helm

import (
	"slices"
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/podgrouper"
)

// The chart lets the pod grouper read exactly the workload kinds it has a rule for or looks
// through, with get alone (a workload's owners are read once, not watched): a kind it cannot
// read would group that kind's pods one by one, with a Forbidden event on each, and a read it
// never makes would be a permission no one needs.
func TestTheChartGrantsThePodGroupersReads(t *testing.T) {
	objects, err := Template()
	if err != nil {
		t.Fatal(err)
	}
	role := Find(objects, "ClusterRole", "kai")
	if role == nil {
		t.Fatal("no ClusterRole kai rendered")
	}
	rules, _ := role.Object["rules"].([]any)
	granted := map[string][]string{} // group/resource → verbs
	for _, rule := range rules {
		r := rule.(map[string]any)
		for _, group := range toStrings(r["apiGroups"]) {
			for _, resource := range toStrings(r["resources"]) {
				granted[group+"/"+resource] = append(granted[group+"/"+resource], toStrings(r["verbs"])...)
			}
		}
	}
	read := map[string]bool{}
	for _, gk := range podgrouper.ReadKinds() {
		key := gk.Group + "/" + strings.ToLower(gk.Kind) + "s"
		read[key] = true
		if !slices.Contains(granted[key], "get") {
			t.Errorf("the grouper reads %s, but the chart grants %s only %v", gk, key, granted[key])
		}
	}
	for key, verbs := range granted {
		if slices.Equal(verbs, []string{"get"}) && !read[key] {
			t.Errorf("the chart grants get on %s, which the grouper never reads", key)
		}
	}
}
