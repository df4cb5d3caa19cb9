package actions

import (
	"maps"
	"slices"
	"strconv"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
)

// ShapeKey describes what a placement attempt depends on besides the cluster: the job's
// queue, priority and preemptibility and its pods' requests and node selectors. Two jobs of
// one shape succeed or fail alike on the same cluster, so an action that only takes
// resources can skip a shape once it failed, which matters when hundreds of identical jobs
// wait in a full cluster.
func ShapeKey(job *api.JobInfo, pods []*api.PodInfo) string {
	// Built by hand rather than with fmt: this runs for every pending job of every action.
	b := make([]byte, 0, 64+32*len(pods))
	b = append(b, job.Queue...)
	b = append(b, '|')
	b = strconv.AppendInt(b, int64(job.Priority), 10)
	b = strconv.AppendBool(append(b, '|'), job.Preemptible)
	for _, p := range pods {
		for _, r := range api.ResourceNames {
			b = strconv.AppendInt(append(b, '|'), p.Request[r], 10)
		}
		if len(p.NodeSelector) > 0 {
			keys := slices.Sorted(maps.Keys(p.NodeSelector))
			for _, k := range keys {
				b = append(append(append(append(b, ','), k...), '='), p.NodeSelector[k]...)
			}
		}
	}
	return string(b)
}
