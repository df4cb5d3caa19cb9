package builders

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

// PodGroupWrapper builds a v2alpha2.PodGroup.
type PodGroupWrapper struct {
	v2alpha2.PodGroup
	meta[*PodGroupWrapper]
}

// MakePodGroup is a gang of one (minMember 1, the CRD's default) in no queue.
func MakePodGroup(namespace, name string) *PodGroupWrapper {
	g := &PodGroupWrapper{PodGroup: v2alpha2.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       v2alpha2.PodGroupSpec{MinMember: 1},
	}}
	g.meta = meta[*PodGroupWrapper]{g, &g.ObjectMeta}
	return g
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

// StartedAt stamps the job as started at t (the last-start-timestamp annotation the
// scheduler writes, to the nanosecond).
func (g *PodGroupWrapper) StartedAt(t time.Time) *PodGroupWrapper {
	return g.Annotation(scheduling.LastStartTimestampAnnotation, scheduling.FormatStartTime(t))
}

// CheckpointedAt reports that the job last saved its work at t (the
// last-checkpoint-timestamp annotation a workload writes).
func (g *PodGroupWrapper) CheckpointedAt(t time.Time) *PodGroupWrapper {
	return g.Annotation(scheduling.LastCheckpointTimestampAnnotation, t.UTC().Format(time.RFC3339Nano))
}

// PreemptionDelay sets spec.preemptionDelay: the job evicts nobody for d after its creation
// or its last eviction.
func (g *PodGroupWrapper) PreemptionDelay(d time.Duration) *PodGroupWrapper {
	g.Spec.PreemptionDelay = &metav1.Duration{Duration: d}
	return g
}

// EvictedAt records that pods of the job were last evicted at t (the last-eviction-timestamp
// annotation the scheduler writes).
func (g *PodGroupWrapper) EvictedAt(t time.Time) *PodGroupWrapper {
	return g.Annotation(scheduling.LastEvictionTimestampAnnotation, scheduling.FormatStartTime(t))
}

// StalenessGracePeriod sets spec.stalenessGracePeriod: how long the running job may stay
// below its minimum before it is evicted as stale.
func (g *PodGroupWrapper) StalenessGracePeriod(d time.Duration) *PodGroupWrapper {
	g.Spec.StalenessGracePeriod = &metav1.Duration{Duration: d}
	return g
}

// MinSubGroup counts the gang in sub-groups: the job runs when n of its top-level sub-groups
// are ready. It clears minMember, which the API refuses beside it.
func (g *PodGroupWrapper) MinSubGroup(n int32) *PodGroupWrapper {
	g.Spec.MinSubGroup, g.Spec.MinMember = &n, 0
	return g
}

// SubGroup adds a top-level sub-group that needs minMember pods (those labelled with its name,
// see PodWrapper.SubGroup).
func (g *PodGroupWrapper) SubGroup(name string, minMember int32) *PodGroupWrapper {
	g.Spec.SubGroups = append(g.Spec.SubGroups, v2alpha2.SubGroup{Name: name, MinMember: minMember})
	return g
}

// InTopology asks the PodGroup to run inside one domain of topology's required level, packed
// into the preferred level's (either may be empty).
func (g *PodGroupWrapper) InTopology(topology, required, preferred string) *PodGroupWrapper {
	g.Spec.TopologyConstraint = &v2alpha2.TopologyConstraint{Topology: topology, RequiredTopologyLevel: required, PreferredTopologyLevel: preferred}
	return g
}
