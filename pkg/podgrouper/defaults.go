package podgrouper

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

var podKind = schema.GroupKind{Kind: "Pod"}

// KindDefault is a cluster's default priority class and preemptibility for one workload kind,
// replacing the built-in default (train, inference or build) for workloads that name none.
type KindDefault struct {
	PriorityName   string
	Preemptibility v2alpha2.Preemptibility
}

// KindDefaults are the defaults by the workload's top kind.
type KindDefaults map[schema.GroupKind]KindDefault

// DefaultsKey is the key of the defaults ConfigMap that holds the table: a YAML list of
// {typeName, group, priorityName, preemptibility}, one entry per kind, as upstream's.
const DefaultsKey = "defaults"

type defaultsEntry struct {
	TypeName       string `json:"typeName"`
	Group          string `json:"group"`
	PriorityName   string `json:"priorityName"`
	Preemptibility string `json:"preemptibility"`
}

// ParseKindDefaults reads the table; an entry without a typeName, with an unknown
// preemptibility, or a kind listed twice is an error naming the entry.
func ParseKindDefaults(data string) (KindDefaults, error) {
	var entries []defaultsEntry
	if err := yaml.UnmarshalStrict([]byte(data), &entries); err != nil {
		return nil, fmt.Errorf("key %q: %w", DefaultsKey, err)
	}
	table := KindDefaults{}
	for i, e := range entries {
		gk := schema.GroupKind{Group: e.Group, Kind: e.TypeName}
		switch p := v2alpha2.Preemptibility(e.Preemptibility); {
		case e.TypeName == "":
			return nil, fmt.Errorf("key %q, entry %d: typeName is empty", DefaultsKey, i)
		case p != "" && p != v2alpha2.Preemptible && p != v2alpha2.NonPreemptible:
			return nil, fmt.Errorf("key %q, entry %d (%s): preemptibility %q is neither %q nor %q", DefaultsKey, i, gk, p, v2alpha2.Preemptible, v2alpha2.NonPreemptible)
		}
		if _, dup := table[gk]; dup {
			return nil, fmt.Errorf("key %q, entry %d: %s is listed twice", DefaultsKey, i, gk)
		}
		table[gk] = KindDefault{PriorityName: e.PriorityName, Preemptibility: v2alpha2.Preemptibility(e.Preemptibility)}
	}
	return table, nil
}

// DefaultsConfigMap reads the per-kind defaults from a ConfigMap, again after each refresh
// period so that an edit takes effect without a restart. A ConfigMap that is missing has no
// defaults; one that does not parse is reported (Report) and its last good table kept; one
// the scheduler may not read is logged and has none. Any other failure (the API server did
// not answer) is an error, so that no PodGroup is made with defaults that may be wrong.
type DefaultsConfigMap struct {
	Reader   client.Reader
	Key      client.ObjectKey
	Clock    clock.PassiveClock
	Refresh  time.Duration
	Report   func(cm *v1.ConfigMap, err error)
	mu       sync.Mutex
	table    KindDefaults
	read     time.Time
	readOnce bool
}

// Table is the current table.
func (d *DefaultsConfigMap) Table(ctx context.Context) (KindDefaults, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.readOnce && d.Clock.Since(d.read) < d.Refresh {
		return d.table, nil
	}
	cm := &v1.ConfigMap{}
	switch err := d.Reader.Get(ctx, d.Key, cm); {
	case apierrors.IsNotFound(err):
		d.table = nil
	case apierrors.IsForbidden(err):
		klog.FromContext(ctx).Error(err, "The pod grouper may not read its defaults ConfigMap; it uses the built-in defaults", "configMap", d.Key)
		d.table = nil
	case err != nil:
		return nil, fmt.Errorf("reading the pod grouper's defaults ConfigMap %s: %w", d.Key, err)
	default:
		table, err := ParseKindDefaults(cm.Data[DefaultsKey])
		if err != nil {
			if d.Report != nil {
				d.Report(cm, err)
			}
			break
		}
		d.table = table
	}
	d.read, d.readOnce = d.Clock.Now(), true
	return d.table, nil
}
