package cache

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// The staleness grace period comes from the PodGroup's field, else its annotation, else a
// pod's annotation; a bad annotation is reported naming it, and the job keeps the default.
// A failed pod's end and the succeeded pods are what stalegangeviction reads of finished pods.
func TestSnapshotReadsStalenessSettings(t *testing.T) {
	grace := scheduling.StalenessGracePeriodAnnotation
	failedAt := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	failed := pod("failed").PodGroup("field").Phase(v1.PodFailed).Obj()
	failed.Status.ContainerStatuses = []v1.ContainerStatus{{State: v1.ContainerState{
		Terminated: &v1.ContainerStateTerminated{FinishedAt: metav1.NewTime(failedAt)}}}}
	objects := []client.Object{
		builders.MakeNode("n1").GPUs(8).Obj(),
		builders.MakePodGroup("ns", "field").Queue("q").MinMember(2).StalenessGracePeriod(3*time.Second).Annotation(grace, "1m").Obj(),
		builders.MakePodGroup("ns", "annotated").Queue("q").MinMember(2).Annotation(grace, "90s").Obj(),
		builders.MakePodGroup("ns", "bad").Queue("q").MinMember(2).Annotation(grace, "soon").Obj(),
		builders.MakePodGroup("ns", "by-pod").Queue("q").MinMember(2).Obj(),
		builders.MakePodGroup("ns", "unset").Queue("q").MinMember(2).Obj(),
		pod("p-field").PodGroup("field").Obj(), failed,
		pod("p-succeeded").PodGroup("field").Phase(v1.PodSucceeded).Obj(),
		pod("p-annotated").PodGroup("annotated").Obj(), pod("p-bad").PodGroup("bad").Obj(),
		pod("p-by-pod").PodGroup("by-pod").Annotation(grace, "45s").Obj(), pod("p-unset").PodGroup("unset").Obj(),
	}
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(objects...).Build()
	snapshot, problems, err := (&Builder{Reader: c, SchedulerName: "kai-scheduler"}).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]time.Duration{"field": 3 * time.Second, "annotated": 90 * time.Second, "by-pod": 45 * time.Second} {
		if got := snapshot.Job(api.NewJobID("ns", name)).StalenessGracePeriod; got == nil || *got != want {
			t.Errorf("%s: grace period %v, want %v", name, got, want)
		}
	}
	for _, name := range []string{"bad", "unset"} {
		if got := snapshot.Job(api.NewJobID("ns", name)).StalenessGracePeriod; got != nil {
			t.Errorf("%s: grace period %v, want none (the configuration's default)", name, *got)
		}
	}
	if len(problems) != 1 || problems[0].Reason != "InvalidStalenessGracePeriod" ||
		!strings.Contains(problems[0].Message, `annotation kai.scheduler/staleness-grace-period="soon"`) {
		t.Errorf("problems %v, want the bad annotation named", problems)
	}
	field := snapshot.Job("ns/field")
	if !field.LastPodFailure.Equal(failedAt) || field.SucceededPods != 1 || len(field.Pods) != 1 {
		t.Errorf("field: failure %v, succeeded %d, pods %d; want %v, 1 and the one live pod", field.LastPodFailure, field.SucceededPods, len(field.Pods), failedAt)
	}
}
