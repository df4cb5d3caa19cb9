package builders

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

// PodGroupWrapper builds a v2alpha2.PodGroup.
type PodGroupWrapper struct{ v2alpha2.PodGroup }

// MakePodGroup is a gang of one (minMember 1, the CRD's default) in no queue.
func MakePodGroup(namespace, name string) *PodGroupWrapper {
	return &PodGroupWrapper{v2alpha2.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       v2alpha2.PodGroupSpec{MinMember: 1},
	}}
}

// Obj is the PodGroup built.
func (g *PodGroupWrapper) Obj() *v2alpha2.PodGroup { return &g.PodGroup }

// Queue sets the queue the job is scheduled in.
func (g *PodGroupWrapper) Queue(name string) *PodGroupWrapper {
	g.Spec.Queue = name
	return g
}

// MinMember sets the gang's size.
func (g *PodGroupWrapper) MinMember(n int32) *PodGroupWrapper {
	g.Spec.MinMember = n
	return g
}

// PriorityClass sets the PriorityClass that gives the job its priority.
func (g *PodGroupWrapper) PriorityClass(name string) *PodGroupWrapper {
	g.Spec.PriorityClassName = name
	return g
}

// UID sets the PodGroup's UID (an API server sets its own; fake clients and stores do not).
func (g *PodGroupWrapper) UID(uid string) *PodGroupWrapper {
	g.ObjectMeta.UID = types.UID(uid)
	return g
}

// Generation sets metadata.generation, which an API server moves on each spec change.
func (g *PodGroupWrapper) Generation(n int64) *PodGroupWrapper {
	g.ObjectMeta.Generation = n
	return g
}

// Label sets a label.
func (g *PodGroupWrapper) Label(key, value string) *PodGroupWrapper {
	g.Labels = set(g.Labels, key, value)
	return g
}

// Annotation sets an annotation.
func (g *PodGroupWrapper) Annotation(key, value string) *PodGroupWrapper {
	g.Annotations = set(g.Annotations, key, value)
	return g
}

// NodePool labels the PodGroup with the node pool whose scheduler serves it.
func (g *PodGroupWrapper) NodePool(name string) *PodGroupWrapper {
	return g.Label(scheduling.NodePoolLabel, name)
}

// CreatedAt sets the PodGroup's creation time.
func (g *PodGroupWrapper) CreatedAt(t time.Time) *PodGroupWrapper {
	g.CreationTimestamp = metav1.NewTime(t)
	return g
}

// StartedAt stamps the job as started at t (the last-start-timestamp annotation the
// scheduler writes, to the nanosecond).
func (g *PodGroupWrapper) StartedAt(t time.Time) *PodGroupWrapper {
	return g.Annotation(scheduling.LastStartTimestampAnnotation, t.Format(time.RFC3339Nano))
}
