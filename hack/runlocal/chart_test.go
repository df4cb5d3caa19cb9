package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/app"
	"github.com/kai-minruntime/kai-scheduler/pkg/kubectlkai"
)

// run-local installs the configuration the chart renders where the chart puts it, and that
// is where kubectl kai explain looks when given no flags: explain answers from it, and the
// scheduler loads the file.
func TestChartConfigIsWhereExplainLooks(t *testing.T) {
	config, err := renderChartConfig()
	if err != nil {
		t.Fatal(err)
	}
	if ref := config.Ref().String(); ref != "kai-scheduler/kai-scheduler-config" || config.Key != "scheduler-config.yaml" {
		t.Errorf("the configuration goes to ConfigMap %s, key %q; the chart's is kai-scheduler/kai-scheduler-config, key scheduler-config.yaml", ref, config.Key)
	}
	file, err := config.writeFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(file) != "scheduler-config.yaml" {
		t.Errorf("the configuration is written to %s", file)
	}
	if _, _, err := app.LoadPolicy(file); err != nil {
		t.Errorf("the scheduler does not load the chart's configuration: %v", err)
	}

	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	cluster := fake.NewClientBuilder().WithScheme(scheme).Build()
	ctx := context.Background()
	if err := config.install(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	if err := apply(ctx, cluster, filepath.Join(repoRoot(), "docs", "examples", "queues-default.yaml"), time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	connect := func(string, string) (client.Reader, string, error) { return cluster, "default", nil }
	if code := kubectlkai.Run(ctx, []string{"explain", "queue", "default-queue"}, &stdout, &stderr, connect, clocktesting.NewFakePassiveClock(time.Now())); code != 0 {
		t.Fatalf("kubectl kai explain with its defaults: exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "reclaimResolveMethod lca") {
		t.Errorf("explain did not answer from the chart's configuration:\n%s", stdout.String())
	}
}

// The configuration is found from the Deployment's arguments, and a chart that passes
// neither flag, or names a ConfigMap it does not render, is told.
func TestSchedulerConfigOf(t *testing.T) {
	deployment := func(args ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"kind": "Deployment", "metadata": map[string]any{"name": "s", "namespace": "ns"},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"args": args}}}}}}}
	}
	configMap := func(namespace, name, key string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": namespace},
			"data": map[string]any{key: "actions: allocate"}}}
	}
	for _, tc := range []struct {
		name    string
		objects []*unstructured.Unstructured
		want    string // the ConfigMap and key, or the error
	}{
		{"the chart's way", []*unstructured.Unstructured{deployment("--scheduler-conf=/etc/s/conf.yaml", "--scheduler-conf-configmap=s-config"), configMap("ns", "s-config", "conf.yaml")},
			"ns/s-config conf.yaml"},
		{"a namespaced ConfigMap", []*unstructured.Unstructured{deployment("--scheduler-conf=/etc/s/conf.yaml", "--scheduler-conf-configmap=other/s-config"), configMap("other", "s-config", "conf.yaml")},
			"other/s-config conf.yaml"},
		{"no flags", []*unstructured.Unstructured{deployment("--v=2"), configMap("ns", "s-config", "conf.yaml")},
			"passes no --scheduler-conf and --scheduler-conf-configmap"},
		{"no such ConfigMap", []*unstructured.Unstructured{deployment("--scheduler-conf=/etc/s/conf.yaml", "--scheduler-conf-configmap=s-config")},
			"the chart renders no ConfigMap ns/s-config"},
		{"no such key", []*unstructured.Unstructured{deployment("--scheduler-conf=/etc/s/other.yaml", "--scheduler-conf-configmap=s-config"), configMap("ns", "s-config", "conf.yaml")},
			`ConfigMap ns/s-config has no key "other.yaml", which --scheduler-conf=/etc/s/other.yaml reads`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config, err := schedulerConfigOf(tc.objects, "s")
			var got string
			if err != nil {
				got = err.Error()
			} else {
				got = config.Ref().String() + " " + config.Key
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
