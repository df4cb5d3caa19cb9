package podgrouper

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var deploymentKind = schema.GroupKind{Group: "apps", Kind: "Deployment"}

func init() {
	register(deployment, deploymentKind)
	register(perOwner, schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, schema.GroupKind{Group: "apps", Kind: "StatefulSet"})
}

// deployment groups all pods of a Deployment, across its ReplicaSets, into one PodGroup of
// gang one, as upstream does for new Deployments: each replica serves on its own, and a
// rollout's new pods join the same job (same queue, same protection clock) instead of
// starting a job per ReplicaSet. Deployments serve, so they default to inference.
func deployment(w *Workload) (Gang, error) {
	return Gang{Object: w.Top(), MinMember: 1, DefaultPriority: InferencePriority}, nil
}
