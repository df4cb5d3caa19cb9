package sim

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// eventRecorder is the simulated cluster's event sink. The scheduler posts the events of its
// decisions (binds, evictions, why a job waits), which kai-sim tells from the cluster itself
// in its timeline, and of problems with the cluster's objects, marked
// scheduling.ProblemEventAnnotation: those become the result's problems.
type eventRecorder struct{ e *engine }

var _ record.EventRecorder = eventRecorder{}

// Event is a decision's event: the timeline has it already.
func (r eventRecorder) Event(runtime.Object, string, string, string) {}

// Eventf is a decision's event: the timeline has it already.
func (r eventRecorder) Eventf(runtime.Object, string, string, string, ...any) {}

// AnnotatedEventf keeps the problems.
func (r eventRecorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventType, reason, messageFmt string, args ...any) {
	if eventType != v1.EventTypeWarning || annotations[scheduling.ProblemEventAnnotation] != "true" {
		return
	}
	name := ""
	if accessor, err := meta.Accessor(object); err == nil {
		name = accessor.GetName()
		if ns := accessor.GetNamespace(); ns != "" {
			name = ns + "/" + name
		}
	}
	r.e.result.Problems = append(r.e.result.Problems, report.Problem{
		Time: r.e.seconds(r.e.clock.Now()), Kind: kindOf(object), Name: name, Reason: reason, Message: fmt.Sprintf(messageFmt, args...),
	})
}

// kindOf names the kind of the objects the scheduler reports about; objects listed from the
// simulated cluster carry no type metadata.
func kindOf(object runtime.Object) string {
	switch object.(type) {
	case *v1.Pod:
		return "Pod"
	case *v2alpha2.PodGroup:
		return "PodGroup"
	case *v2.Queue:
		return "Queue"
	}
	return object.GetObjectKind().GroupVersionKind().Kind
}

// waitingReasons are the reasons the scheduler last wrote on a job's PodGroup for why it
// waits, as `kubectl describe pg` would show them.
func waitingReasons(group *v2alpha2.PodGroup) []string {
	var reasons []string
	if group == nil {
		return nil
	}
	for _, c := range group.Status.SchedulingConditions {
		for _, r := range c.Reasons {
			reasons = append(reasons, r.Message)
		}
	}
	return reasons
}
