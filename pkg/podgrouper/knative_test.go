package podgrouper_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// knativeRevision is a Revision with the annotations, above it the objects of above (nearest
// first: a Configuration, then a Service), and below it its Deployment, ReplicaSet and pod.
func knativeRevision(name string, annotations map[string]string, above ...*unstructured.Unstructured) (*v1.Pod, []*unstructured.Unstructured) {
	revision := workload("serving.knative.dev/v1", "Revision", name, map[string]any{"containerConcurrency": int64(0)})
	revision.SetAnnotations(annotations)
	owners := []*unstructured.Unstructured{revision}
	for i, o := range above {
		controls(o, owners[i])
		owners = append(owners, o)
	}
	deployment := workload("apps/v1", "Deployment", name+"-deployment", nil)
	controls(revision, deployment)
	replicas := workload("apps/v1", "ReplicaSet", name+"-deployment-5d8f", nil)
	controls(deployment, replicas)
	return podOf(name+"-deployment-5d8f-x", nil, replicas), append(owners, deployment, replicas)
}

// A Knative workload is a PodGroup per Revision, of the Revision's min-scale pods (1 when
// unset or 0), at inference priority, whether its top is a Service, a Configuration or the
// Revision itself; a min-scale that is not a whole number of pods is a field problem.
func TestKnativeGang(t *testing.T) {
	minScale := func(v string) map[string]string { return map[string]string{"autoscaling.knative.dev/min-scale": v} }
	service := func(name string) []*unstructured.Unstructured {
		return []*unstructured.Unstructured{workload("serving.knative.dev/v1", "Configuration", name, nil),
			workload("serving.knative.dev/v1", "Service", name, nil)}
	}
	served, servedOwners := knativeRevision("web-00002", minScale("3"), service("web")...)
	unset, unsetOwners := knativeRevision("plain-00001", nil, service("plain")...)
	zero, zeroOwners := knativeRevision("lazy-00001", minScale("0"), service("lazy")...)
	alias, aliasOwners := knativeRevision("old-00001", map[string]string{"autoscaling.knative.dev/minScale": "2"}, service("old")...)
	configured, configuredOwners := knativeRevision("conf-00001", minScale("2"), workload("serving.knative.dev/v1", "Configuration", "conf", nil))
	bare, bareOwners := knativeRevision("rev", minScale("4"))
	words, wordsOwners := knativeRevision("words-00001", minScale("two"), service("words")...)
	negative, negativeOwners := knativeRevision("neg-00001", minScale("-1"), service("neg")...)

	checkKindCases(t, []kindCase{
		{name: "a Service's Revision of min-scale 3", pod: served, objects: servedOwners,
			group: "pg-web-00002-uid-web-00002", minMember: 3, priority: "inference"},
		{name: "no min-scale: 1", pod: unset, objects: unsetOwners,
			group: "pg-plain-00001-uid-plain-00001", minMember: 1, priority: "inference"},
		{name: "min-scale 0: 1", pod: zero, objects: zeroOwners,
			group: "pg-lazy-00001-uid-lazy-00001", minMember: 1, priority: "inference"},
		{name: "the older minScale spelling", pod: alias, objects: aliasOwners,
			group: "pg-old-00001-uid-old-00001", minMember: 2, priority: "inference"},
		{name: "a Configuration without a Service", pod: configured, objects: configuredOwners,
			group: "pg-conf-00001-uid-conf-00001", minMember: 2, priority: "inference"},
		{name: "a Revision on its own", pod: bare, objects: bareOwners,
			group: "pg-rev-uid-rev", minMember: 4, priority: "inference"},
		kindAlone(kindCase{name: "a min-scale that is no number", pod: words, objects: wordsOwners},
			"Revision ns/words-00001: metadata.annotations[autoscaling.knative.dev/min-scale]"),
		kindAlone(kindCase{name: "a negative min-scale", pod: negative, objects: negativeOwners},
			"metadata.annotations[autoscaling.knative.dev/min-scale] is \"-1\""),
	})
}
