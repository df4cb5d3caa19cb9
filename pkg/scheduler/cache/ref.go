package cache

import (
	"strings"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
)

// PodGroupRef is a PodGroup object naming a job, enough to patch it or attach an event.
func PodGroupRef(job api.JobID) *v2alpha2.PodGroup {
	namespace, name, _ := strings.Cut(string(job), "/")
	pg := &v2alpha2.PodGroup{}
	pg.Namespace, pg.Name = namespace, name
	pg.APIVersion, pg.Kind = v2alpha2.SchemeGroupVersion.String(), "PodGroup"
	return pg
}
