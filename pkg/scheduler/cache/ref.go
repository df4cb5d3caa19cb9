package cache

import (
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
)

// PodGroupRef is a PodGroup object naming a job, enough to patch it or attach an event.
func PodGroupRef(job api.JobID) *v2alpha2.PodGroup {
	key := job.NamespacedName()
	pg := &v2alpha2.PodGroup{}
	pg.Namespace, pg.Name = key.Namespace, key.Name
	pg.APIVersion, pg.Kind = v2alpha2.SchemeGroupVersion.String(), "PodGroup"
	return pg
}

// QueueRef is a Queue object naming a queue, enough to patch its status or attach an event.
func QueueRef(name string) *v2.Queue {
	queue := &v2.Queue{}
	queue.Name, queue.APIVersion, queue.Kind = name, v2.SchemeGroupVersion.String(), "Queue"
	return queue
}
