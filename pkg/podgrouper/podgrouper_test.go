package podgrouper_test

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/podgrouper"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// reconciler groups the pods of kai-scheduler, reading owners through c.
func reconciler(c client.Client, pool scheduling.NodePool) *podgrouper.Reconciler {
	grouper := podgrouper.NewGrouper(podgrouper.APIOwners{Reader: c}, clocktesting.NewFakePassiveClock(time.Now()), pool)
	return podgrouper.NewReconciler(c, grouper, "kai-scheduler", nil)
}

// A pool's pod grouper groups the workloads labelled for its pool, on the pod or on its
// owning Job, and labels their PodGroups with the pool, which is how the pool's scheduler
// finds them; another pool's workloads it leaves alone.
func TestPodGrouperGroupsOnlyItsPool(t *testing.T) {
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	pool := func(name string) map[string]string { return map[string]string{scheduling.NodePoolLabel: name} }
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train", UID: "uid-train", Labels: pool("a100")},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](2)}}
	pod := func(name string) *builders.PodWrapper { return builders.MakePod("ns", name).UID("uid-" + name) }
	mine, theirs := pod("mine").NodePool("a100").Obj(), pod("theirs").NodePool("h100").Obj()
	byJob := pod("train-0").ControlledBy(job, batchv1.SchemeGroupVersion.WithKind("Job")).Obj()
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(job, mine, theirs, byJob).Build()
	r := reconciler(c, scheduling.NodePool{LabelKey: scheduling.NodePoolLabel, Name: "a100"})
	for _, p := range []*v1.Pod{mine, theirs, byJob} {
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(p)}); err != nil {
			t.Fatalf("Reconcile %s: %v", p.Name, err)
		}
	}

	groups := &v2alpha2.PodGroupList{}
	if err := c.List(context.Background(), groups); err != nil {
		t.Fatal(err)
	}
	labelled := map[string]string{}
	for _, g := range groups.Items {
		labelled[g.Name] = g.Labels[scheduling.NodePoolLabel]
	}
	want := map[string]string{"pg-mine-uid-mine": "a100", "pg-train-uid-train": "a100"}
	if len(labelled) != len(want) || labelled["pg-mine-uid-mine"] != "a100" || labelled["pg-train-uid-train"] != "a100" {
		t.Fatalf("PodGroups and their pools %v, want %v", labelled, want)
	}
	got := &v1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(theirs), got); err != nil {
		t.Fatal(err)
	}
	if name := got.Annotations[scheduling.PodGroupNameAnnotation]; name != "" {
		t.Fatalf("another pool's pod was grouped into %q", name)
	}
}

// A Job's preemption delay and staleness grace period, annotated on the Job itself (upstream
// reads them from a parent workload), reach the PodGroup made for it; a bare pod's PodGroup
// gets none (its own annotations are read from the pod).
func TestPodGroupCarriesItsJobsDelayAndGracePeriod(t *testing.T) {
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train", UID: "uid-train",
		Annotations: map[string]string{scheduling.PreemptionDelayAnnotation: "5m", scheduling.StalenessGracePeriodAnnotation: "-1s"}}}
	byJob := builders.MakePod("ns", "train-0").UID("uid-train-0").ControlledBy(job, batchv1.SchemeGroupVersion.WithKind("Job")).Obj()
	bare := builders.MakePod("ns", "bare").UID("uid-bare").Annotation(scheduling.PreemptionDelayAnnotation, "1m").Obj()
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(job, byJob, bare).Build()
	r := reconciler(c, scheduling.NodePool{})
	for _, p := range []*v1.Pod{byJob, bare} {
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(p)}); err != nil {
			t.Fatalf("Reconcile %s: %v", p.Name, err)
		}
	}
	group := &v2alpha2.PodGroup{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pg-train-uid-train"}, group); err != nil {
		t.Fatal(err)
	}
	if group.Annotations[scheduling.PreemptionDelayAnnotation] != "5m" || group.Annotations[scheduling.StalenessGracePeriodAnnotation] != "-1s" {
		t.Errorf("the Job's PodGroup has annotations %v, want the Job's delay and grace period", group.Annotations)
	}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pg-bare-uid-bare"}, group); err != nil {
		t.Fatal(err)
	}
	if len(group.Annotations) != 0 {
		t.Errorf("the bare pod's PodGroup has annotations %v, want none (the pod's own are read from it)", group.Annotations)
	}
}

// The queue a workload runs in is its top owner's label, else its pod's, else default-queue,
// as upstream reads it, and so is its preemptibility, each label on its own; a pod or an owner
// annotated kai.scheduler/skip-podgrouper is left to a PodGroup its user makes.
func TestPodGroupQueueAndSkip(t *testing.T) {
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	jobOf := func(name string, labels, annotations map[string]string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name),
			Labels: labels, Annotations: annotations}}
	}
	queue := func(name string) map[string]string { return map[string]string{scheduling.QueueLabel: name} }
	skip := map[string]string{scheduling.SkipPodGrouperAnnotation: "true"}
	for _, tc := range []struct {
		name      string
		job       *batchv1.Job // nil: a bare pod
		podLabels map[string]string
		podNotes  map[string]string
		want      string // the PodGroup's queue; empty: no PodGroup
		preempt   v2alpha2.Preemptibility
	}{
		{name: "the Job's queue outweighs its pod's", job: jobOf("train", queue("research"), nil), podLabels: queue("other"), want: "research"},
		{name: "a Job without one takes its pod's", job: jobOf("eval", nil, nil), podLabels: queue("prod"), want: "prod"},
		{name: "neither: default-queue", job: jobOf("plain", nil, nil), want: podgrouper.DefaultQueue},
		{name: "a bare pod's own", podLabels: queue("prod"), want: "prod"},
		{name: "a skipped pod", podLabels: queue("prod"), podNotes: skip},
		{name: "a skipped Job", job: jobOf("mine", queue("prod"), skip)},
		{name: "a Job's preemptibility, though its queue is its pod's",
			job:       jobOf("tune", map[string]string{scheduling.PreemptibilityLabel: "non-preemptible"}, nil),
			podLabels: map[string]string{scheduling.QueueLabel: "prod", scheduling.PreemptibilityLabel: "preemptible"},
			want:      "prod", preempt: v2alpha2.NonPreemptible},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wrapper := builders.MakePod("ns", "p-0").UID("uid-p-0")
			var objects []client.Object
			if tc.job != nil {
				wrapper = wrapper.ControlledBy(tc.job, batchv1.SchemeGroupVersion.WithKind("Job"))
				objects = append(objects, tc.job)
			}
			pod := wrapper.Obj()
			pod.Labels, pod.Annotations = tc.podLabels, tc.podNotes
			objects = append(objects, pod)
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
			r := reconciler(c, scheduling.NodePool{})
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(pod)}); err != nil {
				t.Fatal(err)
			}
			groups := &v2alpha2.PodGroupList{}
			if err := c.List(context.Background(), groups); err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && len(groups.Items) != 0:
				t.Errorf("made PodGroup %s for a workload that asked to be skipped", groups.Items[0].Name)
			case tc.want != "" && (len(groups.Items) != 1 || groups.Items[0].Spec.Queue != tc.want):
				t.Errorf("PodGroups %v, want one in queue %s", groups.Items, tc.want)
			case tc.want != "" && groups.Items[0].Spec.Preemptibility != tc.preempt:
				t.Errorf("preemptibility %q, want %q", groups.Items[0].Spec.Preemptibility, tc.preempt)
			}
		})
	}
}

// A PodGroup the user deleted while the workload's pods keep coming is made again for the
// next pod, and a workload resized (a Job's parallelism) has its PodGroup's gang follow once
// its owners are read again: no pod names a PodGroup that does not exist, or one whose gang
// its workload can no longer meet.
func TestDeletedPodGroupIsMadeAgain(t *testing.T) {
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train", UID: "uid-train"}, Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](4)}}
	pod := func(name string) *v1.Pod {
		return builders.MakePod("ns", name).UID("uid-"+name).ControlledBy(job, batchv1.SchemeGroupVersion.WithKind("Job")).Obj()
	}
	first, second, third := pod("train-0"), pod("train-1"), pod("train-2")
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(job, first, second, third).Build()
	clk := clocktesting.NewFakePassiveClock(time.Now())
	r := podgrouper.NewReconciler(c, podgrouper.NewGrouper(podgrouper.APIOwners{Reader: c}, clk, scheduling.NodePool{}), "kai-scheduler", nil)
	groupExists := func() bool {
		err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pg-train-uid-train"}, &v2alpha2.PodGroup{})
		return err == nil
	}
	reconcile := func(p *v1.Pod) {
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(p)}); err != nil {
			t.Fatal(err)
		}
	}
	reconcile(first)
	if !groupExists() {
		t.Fatal("no PodGroup for the Job's first pod")
	}
	if err := c.Delete(context.Background(), &v2alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pg-train-uid-train"}}); err != nil {
		t.Fatal(err)
	}
	reconcile(first) // annotated already: as when the PodGroup's deletion is watched
	if !groupExists() {
		t.Fatal("the Job's pod names a PodGroup that was deleted, and it was not made again")
	}
	if err := c.Delete(context.Background(), &v2alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pg-train-uid-train"}}); err != nil {
		t.Fatal(err)
	}
	reconcile(second)
	if !groupExists() {
		t.Fatal("the Job's next pod names a PodGroup that was deleted, and it was not made again")
	}
	handMade := builders.MakePod("ns", "mine").UID("uid-mine").PodGroup("hand-made").Obj()
	if err := c.Create(context.Background(), handMade); err != nil {
		t.Fatal(err)
	}
	reconcile(handMade)
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "hand-made"}, &v2alpha2.PodGroup{}); err == nil {
		t.Error("made the PodGroup a user named on their pod")
	}
	job.Spec.Parallelism = ptr.To[int32](2)
	if err := c.Update(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(clk.Now().Add(10 * time.Minute)) // past the time its owners are remembered
	reconcile(third)
	group := &v2alpha2.PodGroup{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pg-train-uid-train"}, group); err != nil {
		t.Fatal(err)
	}
	if group.Spec.MinMember != 2 {
		t.Errorf("the Job now runs 2 pods at once; its PodGroup's gang is %d", group.Spec.MinMember)
	}
}

// A workload the grouper cannot read is told on the pod as a Warning event marked as a
// problem (kai-sim and dashboards collect those), naming the owner, and the pod still gets a
// PodGroup of its own and its annotation: it never waits for a grouping that cannot come.
func TestUnreadableOwnerIsAnEventAndThePodStillGrouped(t *testing.T) {
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	gone := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gone", UID: "uid-gone"}}
	pod := builders.MakePod("ns", "gone-0").UID("uid-gone-0").ControlledBy(gone, batchv1.SchemeGroupVersion.WithKind("Job")).Obj()
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(pod).Build()
	recorder := record.NewFakeRecorder(10)
	recorder.IncludeObject = true
	grouper := podgrouper.NewGrouper(podgrouper.APIOwners{Reader: c}, clocktesting.NewFakePassiveClock(time.Now()), scheduling.NodePool{})
	r := podgrouper.NewReconciler(c, grouper, "kai-scheduler", recorder)
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(pod)}); err != nil {
		t.Fatal(err)
	}
	select {
	case event := <-recorder.Events:
		for _, want := range []string{"Warning", podgrouper.ReasonOwnerUnreadable, "Job gone", scheduling.ProblemEventAnnotation} {
			if !strings.Contains(event, want) {
				t.Errorf("event %q does not say %q", event, want)
			}
		}
	default:
		t.Error("no event on the pod")
	}
	got := &v1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(pod), got); err != nil {
		t.Fatal(err)
	}
	name := got.Annotations[scheduling.PodGroupNameAnnotation]
	if name != "pg-gone-0-uid-gone-0" {
		t.Fatalf("the pod names PodGroup %q, want its own pg-gone-0-uid-gone-0", name)
	}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, &v2alpha2.PodGroup{}); err != nil {
		t.Errorf("its PodGroup: %v", err)
	}
}
