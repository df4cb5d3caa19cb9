package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// A PodGroup's own min-runtime annotations reach its job; a malformed or negative value is
// ignored and named in a problem (a Warning event on the PodGroup).
func TestOwnMinRuntimeAnnotations(t *testing.T) {
	preempt, reclaim := scheduling.PreemptMinRuntimeAnnotation, scheduling.ReclaimMinRuntimeAnnotation
	objects := []client.Object{
		builders.MakePodGroup("ns", "reclaim-only").Queue("q").MinMember(1).Annotation(reclaim, "1m").Obj(),
		builders.MakePodGroup("ns", "both").Queue("q").MinMember(1).Annotation(preempt, "0s").Annotation(reclaim, "90s").Obj(),
		builders.MakePodGroup("ns", "malformed").Queue("q").MinMember(1).Annotation(reclaim, "soon").Obj(),
		builders.MakePodGroup("ns", "negative").Queue("q").MinMember(1).Annotation(preempt, "-1m").Obj(),
		builders.MakePodGroup("ns", "unset").Queue("q").MinMember(1).Obj(),
	}
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(objects...).Build()
	snapshot, problems, err := (&Builder{Reader: c, SchedulerName: "kai-scheduler"}).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	show := func(d *time.Duration) string {
		if d == nil {
			return "none"
		}
		return d.String()
	}
	for name, want := range map[string][2]string{
		"reclaim-only": {"none", "1m0s"}, "both": {"0s", "1m30s"},
		"malformed": {"none", "none"}, "negative": {"none", "none"}, "unset": {"none", "none"},
	} {
		job := snapshot.Job(model.NewJobID("ns", name))
		if got := [2]string{show(job.OwnPreemptMinRuntime), show(job.OwnReclaimMinRuntime)}; got != want {
			t.Errorf("%s: own (preempt, reclaim) %v, want %v", name, got, want)
		}
	}
	bad := map[string]string{}
	for _, p := range problems {
		if p.Reason == model.ReasonInvalidMinRuntimeAnnotation {
			bad[p.Object.GetName()] = p.Message
		}
	}
	if len(bad) != 2 || !strings.Contains(bad["malformed"], `"soon"`) || !strings.Contains(bad["negative"], "negative") {
		t.Errorf("problems %v, want one naming malformed's \"soon\" and one naming negative's -1m", bad)
	}
}
