package store

import (
	"k8s.io/utils/clock"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// overlayTTL bounds how long the scheduler trusts its own writes over what the informers
// show: past it, an informer that still disagrees is believed (the write was lost).
const overlayTTL = 2 * time.Minute

// Overlay remembers the scheduler's own recent writes — binds, evictions, nominations, start
// stamps — and lays them over what the informers show until the informers catch up. Without it a lagging
// informer would show a just-bound pod as pending, and the next cycle would place it twice.
type Overlay struct {
	mu     sync.Mutex
	binds  map[types.UID]written[binding]
	evicts map[types.UID]written[eviction]
	// nominations hold the node promised to a pending pod ("" for a withdrawn promise), and
	// when the promise was made.
	nominations map[types.UID]written[nomination]
	stamps      map[model.JobID]written[time.Time]
	// evictionStamps hold when pods of a job were last evicted, until the informer shows the
	// PodGroup's eviction stamp: the job's preemption delay re-arms from it at once.
	evictionStamps map[model.JobID]time.Time
	clock          clock.PassiveClock
}

type written[T any] struct {
	value T
	at    time.Time
	// queued is set for a write decided but not sent yet (see BindQueued): it is trusted
	// however long it waits, and its age counts from when it is sent.
	queued bool
}

// NewOverlay returns an empty overlay reading the scheduler's clock (for expiry only).
func NewOverlay(clk clock.PassiveClock) *Overlay {
	return &Overlay{
		binds: map[types.UID]written[binding]{}, evicts: map[types.UID]written[eviction]{},
		nominations: map[types.UID]written[nomination]{},
		stamps:      map[model.JobID]written[time.Time]{}, evictionStamps: map[model.JobID]time.Time{}, clock: clk,
	}
}

// binding is a node a pod was bound to, and the GPU groups of its shares (nil for a pod
// without shares).
type binding struct {
	node      string
	gpuGroups []string
}

// Bound records that a pod was bound to a node, its shares (if it has any) to gpuGroups.
func (o *Overlay) Bound(pod types.UID, node string, gpuGroups []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.binds[pod] = written[binding]{value: binding{node, gpuGroups}, at: o.clock.Now()}
}

// Evicted records that a pod's deletion was requested to make room for preemptor.
func (o *Overlay) Evicted(pod types.UID, preemptor model.JobID, moved bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.evicts[pod] = written[eviction]{value: eviction{preemptor, moved}, at: o.clock.Now()}
}

// eviction is an eviction's preemptor, and whether the pod was moved (to be placed again
// elsewhere) rather than taken (model.PodInfo.Moved).
type eviction struct {
	preemptor model.JobID
	moved     bool
}

// BindQueued records a bind decided but not sent yet. It holds until Bound (sent) or
// BindFailed, however long the queue of API calls is: expiring it while it waits would let
// the scheduler place the pod a second time.
func (o *Overlay) BindQueued(pod types.UID, node string, gpuGroups []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.binds[pod] = written[binding]{value: binding{node, gpuGroups}, at: o.clock.Now(), queued: true}
}

// EvictionQueued records an eviction decided but not sent yet, as BindQueued a bind.
func (o *Overlay) EvictionQueued(pod types.UID, preemptor model.JobID, moved bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.evicts[pod] = written[eviction]{value: eviction{preemptor, moved}, at: o.clock.Now(), queued: true}
}

// BindFailed takes back a bind recorded before it was sent, which the API server refused:
// the next snapshot shows the pod as the informers do.
func (o *Overlay) BindFailed(pod types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.binds, pod)
}

// EvictionFailed takes back an eviction recorded before it was sent, which failed.
func (o *Overlay) EvictionFailed(pod types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.evicts, pod)
}

// nomination is a node promised to a pod ("" for none), when the promise was made, and the
// GPU groups a share pod was promised there.
type nomination struct {
	node      string
	at        time.Time
	gpuGroups []string
}

// NominationQueued records a nomination made at promisedAt (or, with "", a withdrawal)
// decided but not written yet, as BindQueued a bind: it holds until Nominated (written) or
// NominationFailed.
func (o *Overlay) NominationQueued(pod types.UID, node string, promisedAt time.Time, gpuGroups []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.nominations[pod] = written[nomination]{value: nomination{node, promisedAt, gpuGroups}, at: o.clock.Now(), queued: true}
}

// NominationFailed takes back a nomination (or withdrawal) to node recorded before it was
// written, which failed or was dropped: the next snapshot shows the pod as the informers do.
// A later decision about the pod, still queued, stays.
func (o *Overlay) NominationFailed(pod types.UID, node string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if w, ok := o.nominations[pod]; ok && w.queued && w.value.node == node {
		delete(o.nominations, pod)
	}
}

// Nominated records that a pod's nominated node was set (or, with "", cleared), promised at
// promisedAt.
func (o *Overlay) Nominated(pod types.UID, node string, promisedAt time.Time, gpuGroups []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.nominations[pod] = written[nomination]{value: nomination{node, promisedAt, gpuGroups}, at: o.clock.Now()}
}

// Stamped records a job's start stamp, written or about to be written.
func (o *Overlay) Stamped(job model.JobID, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stamps[job] = written[time.Time]{value: at, at: o.clock.Now()}
}

// JobEvicted records that pods of a job were evicted at at, whose stamp the status updater
// writes on its PodGroup. A later eviction replaces an earlier one.
func (o *Overlay) JobEvicted(job model.JobID, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if at.After(o.evictionStamps[job]) {
		o.evictionStamps[job] = at
	}
}

// StampFailed takes back a start stamp whose job did not start after all (a bind of its gang
// failed, or was never sent): the job is unstamped again, as the informers show it.
func (o *Overlay) StampFailed(job model.JobID, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if w, ok := o.stamps[job]; ok && w.value.Equal(at) {
		delete(o.stamps, job)
	}
}

// The readers below are asked once per pod while a snapshot is assembled, which holds o.mu
// for all of them instead of taking it for each.

// boundNode returns the node a pod was bound to if the informer may not show it yet.
func (o *Overlay) boundNode(pod types.UID, informerNode string) (binding, bool) {
	return unseen(o, o.binds, pod, func(binding) bool { return informerNode != "" })
}

// nominatedNode returns the node last nominated to a pod, and when, if the informer may not
// show it yet.
func (o *Overlay) nominatedNode(pod types.UID, informerNode string) (nomination, bool) {
	return unseen(o, o.nominations, pod, func(n nomination) bool { return informerNode == n.node })
}

// evicted reports whether a pod's deletion was requested but the informer may not show it,
// for which preemptor, and whether it was moved.
func (o *Overlay) evicted(pod types.UID, informerDeleting bool) (eviction, bool) {
	return unseen(o, o.evicts, pod, func(eviction) bool { return informerDeleting })
}

// unseen returns a remembered write while the informer has not caught up with it (shows) and
// it is still queued or younger than overlayTTL; a write the informer shows, or one sent
// longer ago than that (lost), is forgotten.
func unseen[K comparable, T any](o *Overlay, writes map[K]written[T], key K, shows func(T) bool) (T, bool) {
	var zero T
	w, ok := writes[key]
	if !ok {
		return zero, false
	}
	if shows(w.value) || (!w.queued && o.clock.Now().Sub(w.at) > overlayTTL) {
		delete(writes, key)
		return zero, false
	}
	return w.value, true
}

// stamp returns the start stamp written for a job if the informer does not show it. Unlike
// binds, stamps do not expire: a stamp whose write keeps failing is still the truth, and the
// status updater keeps retrying it.
func (o *Overlay) stamp(job model.JobID, informer *time.Time) (time.Time, bool) {
	w, ok := o.stamps[job]
	if !ok {
		return time.Time{}, false
	}
	if informer != nil && informer.Equal(w.value) {
		delete(o.stamps, job)
		return time.Time{}, false
	}
	return w.value, true
}

// evictionStamp returns when pods of a job were last evicted if the informer does not show
// that stamp yet. Like start stamps it does not expire: the status updater retries the write.
func (o *Overlay) evictionStamp(job model.JobID, informer *time.Time) (time.Time, bool) {
	at, ok := o.evictionStamps[job]
	if !ok {
		return time.Time{}, false
	}
	if informer != nil && !informer.Before(at) {
		delete(o.evictionStamps, job)
		return time.Time{}, false
	}
	return at, true
}

// forget drops entries of pods and jobs that no longer exist.
func (o *Overlay) forget(livePod func(types.UID) bool, liveJob func(model.JobID) bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	keepOnly(o.stamps, liveJob)
	keepOnly(o.evictionStamps, liveJob)
	keepOnly(o.binds, livePod)
	keepOnly(o.nominations, livePod)
	keepOnly(o.evicts, livePod)
}

// keepOnly deletes the entries of m whose key is not live.
func keepOnly[K comparable, V any](m map[K]V, live func(K) bool) {
	for k := range m {
		if !live(k) {
			delete(m, k)
		}
	}
}
