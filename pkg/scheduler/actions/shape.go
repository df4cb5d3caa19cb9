package actions

import (
	"strconv"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// ShapeKey describes what a placement attempt depends on besides the cluster: the job's
// queue, priority and preemptibility, and its pods' requests (every resource by name) and
// placements (node selector, affinity, tolerations, host ports). Two jobs of one shape
// succeed or fail alike on the same cluster, so an action that only takes resources can
// skip a shape once it failed, which matters when hundreds of identical jobs wait in a full
// cluster.
func ShapeKey(job *model.JobInfo, pods []*model.PodInfo) string {
	// Built by hand rather than with fmt: this runs for every pending job of every action.
	b := make([]byte, 0, 64+40*len(pods))
	b = append(b, job.Queue...)
	b = append(b, '|')
	b = strconv.AppendInt(b, int64(job.Priority), 10)
	b = strconv.AppendBool(append(b, '|'), job.Preemptible)
	for _, p := range pods {
		for _, r := range model.FixedResources {
			b = strconv.AppendInt(append(b, '|'), p.Request.Get(r), 10)
		}
		for _, sc := range p.Request.Scalars() {
			b = strconv.AppendInt(append(append(append(b, ','), sc.Name...), '='), sc.Value, 10)
		}
		b = append(append(b, ';'), p.Placement.Key()...)
	}
	return string(b)
}

// FailureKey is what an action remembers a failed attempt by: the job's shape, or, for a job
// with a topology constraint, the job itself — where such a gang may go depends on its own
// constraints and on where its placed pods already are. (Victims' eligibility depends on the
// shape alone: the solver's answers are still shared by shape.)
func FailureKey(job *model.JobInfo, shape string) string {
	if job.HasTopology() {
		return shape + "|job=" + string(job.ID)
	}
	return shape
}
