package podgrouper

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OwnerReader reads the object an owner reference names, whatever its kind.
type OwnerReader interface {
	ReadOwner(ctx context.Context, namespace string, ref metav1.OwnerReference) (*unstructured.Unstructured, error)
}

// APIOwners reads owners from the API server as unstructured objects: the reader's RESTMapper
// finds each kind's resource, so no other project's client or types are compiled in, and a
// kind whose CRD is not installed is simply never met.
type APIOwners struct {
	Reader client.Reader
}

// ReadOwner reads one owner.
func (a APIOwners) ReadOwner(ctx context.Context, namespace string, ref metav1.OwnerReference) (*unstructured.Unstructured, error) {
	owner := &unstructured.Unstructured{}
	owner.SetAPIVersion(ref.APIVersion)
	owner.SetKind(ref.Kind)
	if err := a.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, owner); err != nil {
		return nil, err
	}
	return owner, nil
}

// ObjectOwners reads owners from a set of objects (kai-sim's input, tests).
type ObjectOwners struct {
	byKey map[ownerKey]*unstructured.Unstructured
}

type ownerKey struct {
	gk              schema.GroupKind
	namespace, name string
}

// NewObjectOwners indexes objects by group, kind, namespace and name.
func NewObjectOwners(objects ...*unstructured.Unstructured) *ObjectOwners {
	o := &ObjectOwners{byKey: map[ownerKey]*unstructured.Unstructured{}}
	for _, obj := range objects {
		o.byKey[ownerKey{obj.GroupVersionKind().GroupKind(), obj.GetNamespace(), obj.GetName()}] = obj
	}
	return o
}

// ReadOwner finds an owner among the objects (a cluster-scoped one by name alone), or says
// it is not found as the API server would.
func (o *ObjectOwners) ReadOwner(_ context.Context, namespace string, ref metav1.OwnerReference) (*unstructured.Unstructured, error) {
	gk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind()
	for _, ns := range []string{namespace, ""} {
		if obj, ok := o.byKey[ownerKey{gk, ns, ref.Name}]; ok {
			return obj, nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: gk.Group, Resource: ref.Kind}, ref.Name)
}

// MaxOwnerDepth bounds the walk up a chain of owners (here, and in kai-sim's reading of a
// file): real workloads are at most five deep (a Knative Service's pods), and a loop of owner
// references must not hang the grouper.
const MaxOwnerDepth = 10

// UnreadableOwner is an owner the grouper may not or cannot read: not found (deleted, or
// recreated with another UID), forbidden, or of a kind the API server does not serve.
type UnreadableOwner struct {
	Ref metav1.OwnerReference
	Err error
}

func (e *UnreadableOwner) Error() string {
	return fmt.Sprintf("cannot read owner %s %s: %v", e.Ref.Kind, e.Ref.Name, e.Err)
}

func (e *UnreadableOwner) Unwrap() error { return e.Err }

// chains reads owner chains, remembering each for a while by the pod's controller,
// so that the pods of one workload, which share it, cost one read of the chain together.
// Concurrent reads of one chain wait for the first.
type chains struct {
	reader OwnerReader
	clock  clock.PassiveClock
	ttl    time.Duration

	mu       sync.Mutex
	known    *lru.Cache // the controller's key (ownersOf) → chainEntry
	inFlight map[string]*pendingChain
}

type chainEntry struct {
	owners []*unstructured.Unstructured
	read   time.Time
}

type pendingChain struct {
	done   chan struct{}
	owners []*unstructured.Unstructured
	err    error
}

// chainCacheSize bounds the remembered chains: a workload's pods mostly arrive together, so
// the chains of the last few thousand workloads serve nearly every pod.
const chainCacheSize = 4096

// chainTTL is how long a chain read serves a workload's pods: long enough for a large
// workload's pods to arrive, short enough that a changed owner (a resized Job) is read again,
// and its PodGroup's gang follows, when its next pod comes.
const chainTTL = 5 * time.Minute

func newChains(reader OwnerReader, clk clock.PassiveClock) *chains {
	return &chains{reader: reader, clock: clk, ttl: chainTTL, known: lru.New(chainCacheSize), inFlight: map[string]*pendingChain{}}
}

// ownersOf reads the pod's controllers up to the top. An owner that cannot be read is an
// *UnreadableOwner; other errors (a timeout) are worth retrying.
func (c *chains) ownersOf(ctx context.Context, pod *v1.Pod) ([]*unstructured.Unstructured, error) {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return nil, nil
	}
	// An owner is known by its UID; one without (written in a kai-sim file) by what it is.
	key := string(ref.UID)
	if key == "" {
		key = ref.APIVersion + "/" + ref.Kind + "/" + pod.Namespace + "/" + ref.Name
	}
	c.mu.Lock()
	if v, ok := c.known.Get(key); ok {
		entry := v.(chainEntry)
		if c.clock.Since(entry.read) < c.ttl {
			c.mu.Unlock()
			return entry.owners, nil
		}
		c.known.Remove(key)
	}
	if pending, ok := c.inFlight[key]; ok {
		c.mu.Unlock()
		select {
		case <-pending.done:
			return pending.owners, pending.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	pending := &pendingChain{done: make(chan struct{})}
	c.inFlight[key] = pending
	c.mu.Unlock()

	pending.owners, pending.err = c.walk(ctx, pod.Namespace, *ref)
	c.mu.Lock()
	delete(c.inFlight, key)
	if pending.err == nil {
		c.known.Add(key, chainEntry{owners: pending.owners, read: c.clock.Now()})
	}
	c.mu.Unlock()
	close(pending.done)
	return pending.owners, pending.err
}

// walk reads the chain of controllers from ref up. An owner of a kind the grouper has no rule
// for (nor looks through) is not read: it stands in the chain as its reference says, and the
// walk stops there (the chart grants no read of it, and what is above it cannot change the
// grouping). An owner that cannot be read is an *UnreadableOwner, returned with the owners
// read below it.
func (c *chains) walk(ctx context.Context, namespace string, ref metav1.OwnerReference) ([]*unstructured.Unstructured, error) {
	var owners []*unstructured.Unstructured
	for next := &ref; next != nil; {
		if len(owners) == MaxOwnerDepth {
			return owners, &UnreadableOwner{Ref: *next, Err: fmt.Errorf("more than %d owners above the pod: a loop of owner references?", MaxOwnerDepth)}
		}
		gk := schema.FromAPIVersionAndKind(next.APIVersion, next.Kind).GroupKind()
		if !readable(gk) {
			return append(owners, unread(namespace, *next)), nil
		}
		owner, err := c.reader.ReadOwner(ctx, namespace, *next)
		switch {
		case apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || meta.IsNoMatchError(err):
			return owners, &UnreadableOwner{Ref: *next, Err: err}
		case err != nil:
			return nil, fmt.Errorf("reading owner %s %s: %w", next.Kind, next.Name, err)
		case next.UID != "" && owner.GetUID() != next.UID:
			return owners, &UnreadableOwner{Ref: *next, Err: errors.New("it was deleted: an object of that name has another UID")}
		}
		owners = append(owners, owner)
		next = metav1.GetControllerOfNoCopy(owner)
	}
	return owners, nil
}

// readable says whether the grouper reads owners of a kind: those it has a rule for, those it
// looks through, and pods (a LeaderWorkerSet's workers are their leader pod's).
func readable(gk schema.GroupKind) bool {
	return rules[gk] != nil || wrappers[gk] || gk == podKind
}

// unread is an owner as its reference names it, not read.
func unread(namespace string, ref metav1.OwnerReference) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion(ref.APIVersion)
	o.SetKind(ref.Kind)
	o.SetNamespace(namespace)
	o.SetName(ref.Name)
	o.SetUID(ref.UID)
	return o
}
