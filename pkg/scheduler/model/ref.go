package model

import (
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

// PodGroupRef is a PodGroup object naming the job, enough to patch it or attach an event.
func (id JobID) PodGroupRef() *v2alpha2.PodGroup {
	key := id.NamespacedName()
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
