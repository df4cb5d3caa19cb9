package podgrouper_test

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/podgrouper"
)

// The defaults ConfigMap is read again after each refresh period, so an edit takes effect
// without a restart; an edit that does not parse is reported once per read and the last good
// table kept; a ConfigMap deleted leaves the built-in defaults.
func TestDefaultsConfigMapFollowsEdits(t *testing.T) {
	notebook := schema.GroupKind{Group: "kubeflow.org", Kind: "Notebook"}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kai", Name: "defaults"},
		Data: map[string]string{podgrouper.DefaultsKey: "- {typeName: Notebook, group: kubeflow.org, priorityName: build-preemptible}"}}
	c := fake.NewClientBuilder().WithObjects(cm).Build()
	clk := clocktesting.NewFakePassiveClock(time.Now())
	var reports []string
	d := &podgrouper.DefaultsConfigMap{Reader: c, Key: client.ObjectKeyFromObject(cm), Clock: clk, Refresh: time.Minute,
		Report: func(_ *v1.ConfigMap, err error) { reports = append(reports, err.Error()) }}
	ctx := context.Background()
	priority := func() string {
		table, err := d.Table(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return table[notebook].PriorityName
	}
	edit := func(data string) {
		cm.Data[podgrouper.DefaultsKey] = data
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}

	if got := priority(); got != "build-preemptible" {
		t.Fatalf("Notebook's default %q, want the ConfigMap's build-preemptible", got)
	}
	edit("- {typeName: Notebook, group: kubeflow.org, priorityName: inference}")
	if got := priority(); got != "build-preemptible" {
		t.Errorf("within the refresh period the default is %q, want the table read before", got)
	}
	clk.SetTime(clk.Now().Add(time.Minute))
	if got := priority(); got != "inference" {
		t.Errorf("after the refresh period the default is %q, want the edit's inference", got)
	}
	edit("- {typeName: Notebook, preemptibility: sometimes}")
	clk.SetTime(clk.Now().Add(time.Minute))
	if got := priority(); got != "inference" || len(reports) != 1 || !strings.Contains(reports[0], `"sometimes"`) {
		t.Errorf("after a bad edit: default %q, reports %q; want the last good table (inference) and one report naming the value", got, reports)
	}
	if err := c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(clk.Now().Add(time.Minute))
	if got := priority(); got != "" {
		t.Errorf("with the ConfigMap deleted the default is %q, want none (the kind's built-in)", got)
	}
}

// When the API server does not answer, no PodGroup is made with defaults that may be wrong:
// the table is an error (the pod is grouped again later), and the next read is not put off.
func TestDefaultsConfigMapUnansweredIsRetried(t *testing.T) {
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kai", Name: "defaults"},
		Data: map[string]string{podgrouper.DefaultsKey: "- {typeName: Notebook, group: kubeflow.org, priorityName: build-preemptible}"}}
	reader := &flakyReader{Reader: fake.NewClientBuilder().WithObjects(cm).Build(), failures: 1}
	d := &podgrouper.DefaultsConfigMap{Reader: reader, Key: client.ObjectKeyFromObject(cm),
		Clock: clocktesting.NewFakePassiveClock(time.Now()), Refresh: time.Minute}
	if _, err := d.Table(context.Background()); err == nil {
		t.Fatal("a timeout reading the ConfigMap gave a table, want an error")
	}
	table, err := d.Table(context.Background())
	if err != nil || table[schema.GroupKind{Group: "kubeflow.org", Kind: "Notebook"}].PriorityName != "build-preemptible" {
		t.Errorf("read again at once: %v, %v; want the ConfigMap's table", table, err)
	}
}

type flakyReader struct {
	client.Reader
	failures int
}

func (r *flakyReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if r.failures > 0 {
		r.failures--
		return apierrors.NewTimeoutError("the API server is slow", 1)
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}
