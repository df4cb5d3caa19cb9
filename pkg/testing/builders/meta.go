package builders

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// meta holds the options every wrapper has, on its object's metadata. Each returns the
// wrapper W that embeds it, so that options chain: MakePodGroup(...).Label(...).Queue(...).
type meta[W any] struct {
	wrapper W
	object  *metav1.ObjectMeta
}

// Label sets a label.
func (m meta[W]) Label(key, value string) W {
	m.object.Labels = set(m.object.Labels, key, value)
	return m.wrapper
}

// Annotation sets an annotation.
func (m meta[W]) Annotation(key, value string) W {
	m.object.Annotations = set(m.object.Annotations, key, value)
	return m.wrapper
}

// NodePool labels the object with a node pool: the pool a node belongs to, whose scheduler
// serves a queue or a PodGroup, or whose pod grouper groups a pod.
func (m meta[W]) NodePool(name string) W { return m.Label(scheduling.NodePoolLabel, name) }

// UID sets the object's UID (an API server sets its own; fake clients and stores do not).
func (m meta[W]) UID(uid string) W {
	m.object.UID = types.UID(uid)
	return m.wrapper
}

// Generation sets metadata.generation, which an API server moves on each spec change.
func (m meta[W]) Generation(n int64) W {
	m.object.Generation = n
	return m.wrapper
}

// CreatedAt sets the object's creation time.
func (m meta[W]) CreatedAt(t time.Time) W {
	m.object.CreationTimestamp = metav1.NewTime(t)
	return m.wrapper
}

// set is m with key set to value, m made if nil.
func set(m map[string]string, key, value string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[key] = value
	return m
}
