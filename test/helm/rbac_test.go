package helm

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kai-minruntime/kai-scheduler/pkg/app"
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

// The chart lets the scheduler get, list and watch every kind its informers watch
// (app.Watched): an informer refused its list never syncs, and the scheduler, which runs no
// cycle before all have, would never schedule.
func TestTheChartGrantsTheSchedulersWatches(t *testing.T) {
	objects, err := Template()
	if err != nil {
		t.Fatal(err)
	}
	role := Find(objects, "ClusterRole", "kai")
	if role == nil {
		t.Fatal("no ClusterRole kai rendered")
	}
	granted := map[string]bool{} // "group/resource: verb"
	for _, line := range rulesOf(role) {
		resource, verbs, _ := strings.Cut(line, ": ")
		for _, verb := range strings.Split(verbs, ",") {
			granted[resource+": "+verb] = true
		}
	}
	watched, err := app.Watched()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range watched {
		for _, verb := range []string{"get", "list", "watch"} {
			if !granted[r.Group+"/"+r.Resource+": "+verb] {
				t.Errorf("the scheduler watches %s, but the chart does not grant %s on it", r, verb)
			}
		}
	}
}

// podGrouper.defaults becomes the defaults ConfigMap, which the parsing the scheduler does
// accepts, the flag naming it, and the scheduler's right to read that ConfigMap alone; without
// defaults, none of the three.
func TestPodGrouperDefaultsReachTheScheduler(t *testing.T) {
	objects, err := Template("--set-json", `podGrouper.defaults=[{"typeName":"Notebook","group":"kubeflow.org","priorityName":"build-preemptible","preemptibility":"preemptible"}]`)
	if err != nil {
		t.Fatal(err)
	}
	cm := Find(objects, "ConfigMap", "kai-podgrouper-defaults")
	if cm == nil {
		t.Fatal("no ConfigMap kai-podgrouper-defaults")
	}
	data, _, _ := unstructured.NestedString(cm.Object, "data", podgrouper.DefaultsKey)
	table, err := podgrouper.ParseKindDefaults(data)
	if err != nil {
		t.Fatalf("the scheduler would refuse the rendered table: %v\n%s", err, data)
	}
	if d := table[schema.GroupKind{Group: "kubeflow.org", Kind: "Notebook"}]; d.PriorityName != "build-preemptible" || d.Preemptibility != "preemptible" {
		t.Errorf("Notebook's default %+v", d)
	}
	deployment := Find(objects, "Deployment", "kai")
	args, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	if !slices.Contains(toStrings(args[0].(map[string]any)["args"]), "--podgrouper-defaults-configmap=kai-podgrouper-defaults") {
		t.Errorf("the scheduler's args %v do not name the defaults ConfigMap", args[0].(map[string]any)["args"])
	}
	role := Find(objects, "Role", "kai-leader-election")
	if role == nil || !strings.Contains(fmt.Sprint(role.Object["rules"]), "kai-podgrouper-defaults") {
		t.Errorf("the scheduler may not read its defaults ConfigMap: %v", role)
	}

	plain, err := Template()
	if err != nil {
		t.Fatal(err)
	}
	if Find(plain, "ConfigMap", "kai-podgrouper-defaults") != nil {
		t.Error("a defaults ConfigMap rendered without podGrouper.defaults")
	}
}
