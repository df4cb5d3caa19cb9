package app

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
)

// The leader tells on its ConfigMap what it runs and, in one event, every part it skipped,
// and tells it again before the API server lets the events expire.
func TestConfigurationIsPostedOnItsConfigMap(t *testing.T) {
	policy, warnings, err := scheduler.LoadPolicy([]byte(`
actions: "allocate, consolidation, reclaim, preempt, stalegangeviction"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
    arguments: {defaultReclaimMinRuntime: 2h}
  - name: elastic
  - name: gpusharingorder
`))
	if err != nil || len(warnings) != 2 {
		t.Fatalf("the configuration should load with two warnings: %v %q", err, warnings)
	}
	policy.SetMaxConsolidationPreemptees(4) // as Run does with --max-consolidation-preemptees
	key := types.NamespacedName{Namespace: "kai-system", Name: "kai-a100-config"}
	reader := fake.NewClientBuilder().WithScheme(scheme.Scheme).
		WithObjects(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}).Build()
	recorder := record.NewFakeRecorder(10)
	clk := clocktesting.NewFakeClock(time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	pool := scheduling.NodePool{LabelKey: scheduling.NodePoolLabel, Name: "a100"}
	go func() { done <- postConfigurationRunnable(reader, recorder, clk, key, pool, policy, warnings)(ctx) }()

	for round := range 2 {
		loaded, warned := <-recorder.Events, <-recorder.Events
		if !strings.HasPrefix(loaded, "Normal ConfigurationLoaded the scheduler of node pool a100 runs actions allocate, consolidation (maxConsolidationPreemptees=4), reclaim, preempt, stalegangeviction (globalDefaultStalenessGracePeriod=1m0s); plugins priority; proportion; minruntime:") ||
			!strings.Contains(loaded, "defaultReclaimMinRuntime=2h0m0s") {
			t.Errorf("round %d: %q does not say what runs", round, loaded)
		}
		for _, want := range []string{"Warning ConfigurationWarning the scheduler of node pool a100 skips or defaults 2 part(s) of its configuration: (1) ",
			`(1) tiers[0].plugins[3]: plugin "elastic"`, `(2) tiers[0].plugins[4]: plugin "gpusharingorder"`} {
			if !strings.Contains(warned, want) {
				t.Errorf("round %d: %q lacks %q", round, warned, want)
			}
		}
		for !clk.HasWaiters() { // the runnable waits for its ticker
			time.Sleep(time.Millisecond)
		}
		clk.Step(configurationRepost)
	}
	<-recorder.Events // the third post, after the second step
	<-recorder.Events
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("the runnable ended with %v; it must end cleanly with the manager", err)
	}

	// A ConfigMap it cannot read is logged, not fatal, and posts nothing.
	missing := types.NamespacedName{Namespace: "kai-system", Name: "gone"}
	postConfiguration(context.Background(), reader, recorder, missing, pool, policy, warnings)
	select {
	case e := <-recorder.Events:
		t.Errorf("posted %q on a ConfigMap that does not exist", e)
	default:
	}
}

func TestLongMessagesAreCutWhereTheAPIServerWould(t *testing.T) {
	long := strings.Repeat("é", maxEventMessage)
	got := truncate(long)
	if len(got) > maxEventMessage || !strings.HasSuffix(got, "(kai-scheduler check-config prints it all)") || !strings.HasPrefix(got, "éé") {
		t.Errorf("truncate gave %d bytes: %q", len(got), got[len(got)-60:])
	}
	if short := "fits"; truncate(short) != short {
		t.Errorf("a short message was changed to %q", truncate(short))
	}
}
