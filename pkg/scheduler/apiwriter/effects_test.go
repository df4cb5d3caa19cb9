package apiwriter_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/apiwriter"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
)

// A victim's DisruptionTarget condition is dated by the scheduler's clock (virtual in
// kai-sim), not the machine's.
func TestEvictionConditionIsDatedByTheSchedulersClock(t *testing.T) {
	c := evictionCluster(t, func(call string) error {
		if strings.HasPrefix(call, "delete ") {
			return errors.New("injected: the pod stays, to be read")
		}
		return nil
	})
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(at)
	e := &apiwriter.Effects{Client: c, Overlay: store.NewOverlay(clk), Clock: clk}
	victim := &model.PodInfo{Namespace: "ns", Name: "victim-0", UID: "uid-victim-0", Job: "ns/victim", NodeName: "n1"}
	if err := e.Evict(context.Background(), victim, framework.EvictionReason{Action: framework.Reclaim, Preemptor: "ns/pre"}); err == nil {
		t.Fatal("the eviction succeeded though its delete failed")
	}
	pod := &v1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "victim-0"}, pod); err != nil {
		t.Fatal(err)
	}
	for _, condition := range pod.Status.Conditions {
		if condition.Type == v1.DisruptionTarget {
			if !condition.LastTransitionTime.Time.Equal(at) {
				t.Errorf("DisruptionTarget dated %s, want the scheduler's %s", condition.LastTransitionTime, at)
			}
			return
		}
	}
	t.Fatalf("no DisruptionTarget condition on the victim: %v", pod.Status.Conditions)
}
