package podgrouper

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	knativeServiceKind       = schema.GroupKind{Group: "serving.knative.dev", Kind: "Service"}
	knativeConfigurationKind = schema.GroupKind{Group: "serving.knative.dev", Kind: "Configuration"}
	knativeRevisionKind      = schema.GroupKind{Group: "serving.knative.dev", Kind: "Revision"}
)

// knativeMinScale are the annotations, in Knative's order of precedence, that set the fewest
// pods a Revision keeps; Knative copies a Service's template annotations onto its Revisions.
var knativeMinScale = []string{"autoscaling.knative.dev/min-scale", "autoscaling.knative.dev/minScale"}

func init() {
	register(knativeService, knativeServiceKind, knativeConfigurationKind, knativeRevisionKind)
}

// knativeService groups a Knative workload by Revision (Service → Configuration → Revision →
// Deployment → ReplicaSet → Pod): each Revision is a version of the code with pods of its own,
// and during a rollout the old and the new one run side by side, so each is its own gang. The
// gang is the Revision's min-scale, the pods Knative keeps however little traffic comes:
// they are what the service needs to be up at all. Its default is 1, and 0 (scale to zero)
// is 1 too, since a pod that runs at all needs a gang of at least itself. A min-scale that is
// not a whole number of pods is a field problem, as Knative's own validation would say.
// Knative serves, so it defaults to inference.
func knativeService(w *Workload) (Gang, error) {
	revision := w.Nearest(knativeRevisionKind)
	if revision == nil { // not a Revision's pod: the top owner, one pod at a time
		return Gang{Object: w.Top(), MinMember: 1, DefaultPriority: InferencePriority}, nil
	}
	gang := Gang{Object: revision, MinMember: 1, DefaultPriority: InferencePriority}
	for _, key := range knativeMinScale {
		value, ok := revision.GetAnnotations()[key]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(value, 10, 32)
		if err != nil || n < 0 {
			return Gang{}, &FieldError{Object: revision, Field: "metadata.annotations[" + key + "]",
				Problem: fmt.Sprintf("is %q, not a whole number of pods", value)}
		}
		gang.MinMember = max(int32(n), 1)
		break
	}
	return gang, nil
}
