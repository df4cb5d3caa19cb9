package gpureservation_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpureservation"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// cluster is a fake API server whose reservation pods report their device (GPU-<group>) as
// soon as they are made, as the reservation program would once started.
func cluster(t *testing.T, objects ...client.Object) client.Client {
	t.Helper()
	return fake.NewClientBuilder().WithObjects(objects...).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if pod, ok := obj.(*v1.Pod); ok && pod.Namespace == scheduling.ReservationNamespace {
				pod.Annotations[scheduling.ReservedGPUAnnotation] = "GPU-" + pod.Labels[scheduling.GPUGroupLabel]
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
}

func pendingShare(name string) (*v1.Pod, *model.PodInfo) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, UID: types.UID("uid-" + name),
		Annotations: map[string]string{scheduling.GPUFractionAnnotation: "0.5"}}}
	share, _ := model.ParseGPUShare(pod)
	return pod, &model.PodInfo{Namespace: "team", Name: name, UID: string(pod.UID), Share: share, GPUGroups: []string{"g1"}}
}

func reservationExists(t *testing.T, c client.Client) bool {
	t.Helper()
	err := c.Get(context.Background(), client.ObjectKey{Namespace: scheduling.ReservationNamespace, Name: gpureservation.PodName("n1", "g1")}, &v1.Pod{})
	if err != nil && client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	return err == nil
}

// Two shares bound onto one fresh device at once: the first made the reservation, the second
// reads its device from it. The first's bind failing must not take the reservation from
// under the second, which no pod shows yet (its label is written after); once no bind counts
// on it, a failed bind that made it takes it back.
func TestAFailedBindLeavesAReservationAnotherBindCountsOn(t *testing.T) {
	ctx := context.Background()
	p1, s1 := pendingShare("s1")
	p2, s2 := pendingShare("s2")
	c := cluster(t, p1, p2)
	r := &gpureservation.Reserver{Client: c, Clock: clocktesting.NewFakeClock(time.Now()), Image: "r:1"}
	first, err := r.Prepare(ctx, s1, "n1")
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.Prepare(ctx, s2, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Undo(ctx, first); err != nil {
		t.Fatal(err)
	}
	r.Finish(first)
	if !reservationExists(t, c) {
		t.Fatal("the first bind's undo deleted the reservation the second bind counts on")
	}
	if !r.InUse("g1") {
		t.Fatal("the reservation is not in use while the second bind counts on it: the collector would take it")
	}
	if err := r.Undo(ctx, second); err != nil {
		t.Fatal(err)
	}
	r.Finish(second)
	if !reservationExists(t, c) {
		t.Fatal("the second bind made no reservation, so its undo must not delete it")
	}
	third, err := r.Prepare(ctx, s1, "n1") // the first share, placed again onto the device
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: scheduling.ReservationNamespace, Name: gpureservation.PodName("n1", "g1")}}); err != nil {
		t.Fatal(err)
	}
	r.Finish(third)
	fresh, err := r.Prepare(ctx, s1, "n1") // makes it anew
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Undo(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	r.Finish(fresh)
	if reservationExists(t, c) {
		t.Fatal("a failed bind left the reservation it made, though no other bind or share counts on it")
	}

	// A share running on the device (its label says so) keeps the reservation a failed bind made.
	holder := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "running", UID: "uid-running",
		Labels: map[string]string{scheduling.GPUGroupLabel: "g1"}}, Spec: v1.PodSpec{NodeName: "n1"}, Status: v1.PodStatus{Phase: v1.PodRunning}}
	if err := c.Create(ctx, holder); err != nil {
		t.Fatal(err)
	}
	made, err := r.Prepare(ctx, s1, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Undo(ctx, made); err != nil {
		t.Fatal(err)
	}
	r.Finish(made)
	if !reservationExists(t, c) {
		t.Fatal("a failed bind deleted the reservation a running share holds")
	}
}

// A reservation pod whose container cannot start (a wrong image, a crashing program) fails
// the bind at once instead of holding a dispatcher's worker for the whole timeout.
func TestABindGivesUpAtOnceOnAReservationThatCannotStart(t *testing.T) {
	pod, share := pendingShare("s1")
	stuck := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: scheduling.ReservationNamespace, Name: gpureservation.PodName("n1", "g1"),
		Labels: map[string]string{scheduling.GPUGroupLabel: "g1"}},
		Spec: v1.PodSpec{NodeName: "n1"},
		Status: v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{
			Reason: "ImagePullBackOff", Message: `Back-off pulling image "r:typo"`}}}}}}
	r := &gpureservation.Reserver{Client: cluster(t, pod, stuck), Clock: clocktesting.NewFakeClock(time.Now()), Image: "r:typo"}
	done := make(chan error, 1)
	go func() { _, err := r.Prepare(context.Background(), share, "n1"); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), `cannot start: ImagePullBackOff Back-off pulling image "r:typo"`) {
			t.Fatalf("error %v, want the reason it cannot start", err)
		}
	case <-time.After(10 * time.Second): // the fake clock never moves: a wait would never end
		t.Fatal("the bind waited for a reservation that cannot start")
	}
}

// The collector takes a failed reservation even while shares hold its device (the next bind
// makes it anew), never a live one a share holds or a bind counts on, nor one of another
// pool's node.
func TestCollectorTakesFailedReservationsButNoneInUse(t *testing.T) {
	now := time.Now()
	old := metav1.NewTime(now.Add(-time.Hour))
	reservation := func(node, group string, phase v1.PodPhase) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: scheduling.ReservationNamespace, Name: gpureservation.PodName(node, group),
			CreationTimestamp: old, Labels: map[string]string{scheduling.ReservationAppLabel: scheduling.ReservationApp, scheduling.GPUGroupLabel: group}},
			Spec: v1.PodSpec{NodeName: node}, Status: v1.PodStatus{Phase: phase}}
	}
	holder := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "infer", Labels: map[string]string{scheduling.GPUGroupLabel: "held"}},
		Spec: v1.PodSpec{NodeName: "n1"}, Status: v1.PodStatus{Phase: v1.PodRunning}}
	objects := []client.Object{holder,
		reservation("n1", "held", v1.PodRunning), reservation("n1", "held-failed", v1.PodFailed),
		reservation("n1", "binding", v1.PodRunning), reservation("n1", "orphan", v1.PodRunning),
		reservation("other-pool", "orphan", v1.PodRunning)}
	objects[2].(*v1.Pod).Labels[scheduling.GPUGroupLabel] = "held" // the failed one is of the held group too
	c := fake.NewClientBuilder().WithObjects(objects...).Build()
	collector := &gpureservation.Collector{Client: c, Clock: clocktesting.NewFakeClock(now), Grace: time.Minute,
		InUse: func(group string) bool { return group == "binding" }, OwnsNode: func(node string) bool { return node == "n1" }}
	deleted, err := collector.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{gpureservation.PodName("n1", "held-failed"), gpureservation.PodName("n1", "orphan")}
	slices.Sort(want)
	if !slices.Equal(deleted, want) {
		t.Fatalf("collected %v, want the failed one and the orphan of this pool's node: %v", deleted, want)
	}
}
