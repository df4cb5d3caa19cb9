package kube_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/cache"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/kube"
)

// cluster is a fake API server with one 8-GPU node and a job of n pending pods, whose binds
// go through bind (the fake client has no binding subresource of its own).
func cluster(t *testing.T, n int, bind func(ctx context.Context, c client.Client, pod, node string) error) client.Client {
	t.Helper()
	scheme := clientgoscheme.Scheme
	if err := install.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	objects := []client.Object{
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			api.GPUResourceName: resource.MustParse("8"), v1.ResourcePods: resource.MustParse("110")}}},
		&v2alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}, Spec: v2alpha2.PodGroupSpec{MinMember: 1, Queue: "q"}},
	}
	for i := range n {
		objects = append(objects, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", i),
			UID: types.UID(fmt.Sprint("uid-", i)), Annotations: map[string]string{scheduling.PodGroupNameAnnotation: "job"}},
			Spec: v1.PodSpec{SchedulerName: "kai-scheduler", Containers: []v1.Container{{Name: "c"}}}})
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).WithInterceptorFuncs(interceptor.Funcs{
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj client.Object, subObj client.Object, _ ...client.SubResourceCreateOption) error {
			if sub != "binding" {
				return fmt.Errorf("unexpected subresource %s", sub)
			}
			return bind(ctx, c, obj.GetName(), subObj.(*v1.Binding).Target.Name)
		},
	}).Build()
}

// setNode is what the API server does for a binding.
func setNode(ctx context.Context, c client.Client, name, node string) error {
	pod := &v1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: name}, pod); err != nil {
		return err
	}
	pod.Spec.NodeName = node
	return c.Update(ctx, pod)
}

// statuses reads the pods as the next snapshot will see them.
func statuses(t *testing.T, c client.Client, overlay *cache.Overlay) map[string]string {
	t.Helper()
	snapshot, _, err := (&cache.Builder{Reader: c, SchedulerName: "kai-scheduler", Overlay: overlay}).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range snapshot.Job("ns/job").Pods {
		got[p.Name] = p.Status.String() + "@" + p.NodeName
	}
	return got
}

func podInfo(i int) *api.PodInfo {
	return &api.PodInfo{Namespace: "ns", Name: fmt.Sprintf("p%d", i), UID: fmt.Sprint("uid-", i), Job: "ns/job"}
}

// A bind leaves the cycle at once and the next snapshot already sees it; the API call is
// made by a worker, and a call that fails is taken back, so the cycle after it sees the pod
// pending again and places it anew.
func TestDispatchedBindsAreSeenAtOnceAndFailuresTakenBack(t *testing.T) {
	release := make(chan struct{})
	c := cluster(t, 2, func(ctx context.Context, c client.Client, pod, node string) error {
		<-release // the API server is slow: the cycle must not wait for it
		if pod == "p1" {
			return errors.New("injected: the API server refused the binding")
		}
		return setNode(ctx, c, pod, node)
	})
	overlay := cache.NewOverlay(time.Now)
	d := kube.NewDispatcher(&kube.Effects{Client: c, Overlay: overlay}, 2)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = d.Start(ctx); close(stopped) }()
	var answer sync.Once // a failing check must not leave the workers blocked forever
	defer func() { answer.Do(func() { close(release) }); cancel(); <-stopped }()

	for i := range 2 {
		if err := d.Bind(ctx, podInfo(i), "n1"); err != nil {
			t.Fatal(err)
		}
	}
	if got := statuses(t, c, overlay); got["p0"] != "Bound@n1" || got["p1"] != "Bound@n1" {
		t.Fatalf("while the binds are in flight the snapshot shows %v, want both bound", got)
	}
	answer.Do(func() { close(release) })
	d.Wait()
	if got := statuses(t, c, overlay); got["p0"] != "Bound@n1" || got["p1"] != "Pending@" {
		t.Fatalf("after the API answered the snapshot shows %v, want p0 bound and p1 pending again", got)
	}
}

// No more calls are in flight than there are workers, however many decisions a cycle makes.
func TestDispatchIsBounded(t *testing.T) {
	const workers, binds = 3, 12
	var inflight, most atomic.Int32
	release := make(chan struct{})
	c := cluster(t, binds, func(ctx context.Context, c client.Client, pod, node string) error {
		n := inflight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		inflight.Add(-1)
		return setNode(ctx, c, pod, node)
	})
	d := kube.NewDispatcher(&kube.Effects{Client: c, Overlay: cache.NewOverlay(time.Now)}, workers)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = d.Start(ctx); close(stopped) }()
	for i := range binds {
		_ = d.Bind(ctx, podInfo(i), "n1")
	}
	// Let the workers fill up before anything is answered: an unbounded dispatcher would
	// have all 12 calls waiting by then.
	for deadline := time.Now().Add(10 * time.Second); inflight.Load() < workers && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	for range binds {
		release <- struct{}{}
	}
	d.Wait()
	if got := most.Load(); got != workers {
		t.Fatalf("%d calls were in flight at once, want %d (the workers)", got, workers)
	}
	// Shutting down sends what is still queued: a decision made is never dropped.
	_ = d.Bind(ctx, podInfo(0), "n1")
	close(release)
	cancel()
	<-stopped
	if n := inflight.Load(); n != 0 {
		t.Fatalf("%d calls still running after Start returned", n)
	}
}

// A decision waiting behind a long queue of API calls is trusted however long it waits:
// if it expired, the scheduler would place the pod a second time.
func TestQueuedDecisionsDoNotExpireWhileTheyWait(t *testing.T) {
	release := make(chan struct{})
	c := cluster(t, 1, func(ctx context.Context, c client.Client, pod, node string) error {
		<-release
		return setNode(ctx, c, pod, node)
	})
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	overlay := cache.NewOverlay(clk.Now)
	d := kube.NewDispatcher(&kube.Effects{Client: c, Overlay: overlay}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = d.Start(ctx); close(stopped) }()
	var answer sync.Once
	defer func() { answer.Do(func() { close(release) }); cancel(); <-stopped }()
	_ = d.Bind(ctx, podInfo(0), "n1")
	clk.Step(time.Hour)
	if got := statuses(t, c, overlay)["p0"]; got != "Bound@n1" {
		t.Fatalf("a bind queued an hour ago shows as %s, want Bound@n1", got)
	}
	answer.Do(func() { close(release) })
	d.Wait()
	if got := statuses(t, c, overlay)["p0"]; got != "Bound@n1" {
		t.Fatalf("after it was sent the pod shows as %s", got)
	}
}

// Once the workers have stopped, a decision is sent by its caller rather than dropped.
func TestDecisionsAfterShutdownAreSent(t *testing.T) {
	c := cluster(t, 1, setNode)
	d := kube.NewDispatcher(&kube.Effects{Client: c, Overlay: cache.NewOverlay(time.Now)}, 2)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = d.Start(ctx); close(stopped) }()
	cancel()
	<-stopped
	if err := d.Bind(ctx, podInfo(0), "n1"); err != nil {
		t.Fatal(err)
	}
	d.Wait() // returns: nothing is left queued
	pod := &v1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "p0"}, pod); err != nil || pod.Spec.NodeName != "n1" {
		t.Fatalf("after shutdown the bind was not sent: node %q, %v", pod.Spec.NodeName, err)
	}
}
