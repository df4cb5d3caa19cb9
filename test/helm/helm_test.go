package helm

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kai-minruntime/kai-scheduler/pkg/app"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/conf"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/minruntime"
)

func TestChartLints(t *testing.T) {
	if out, err := Run("lint", ChartDir(), "--strict"); err != nil {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
}

// minRuntimeArgs renders the chart, checks the scheduler accepts the configuration, and
// returns the minruntime plugin's arguments as durations and method.
func minRuntimeArgs(t *testing.T, args ...string) (preempt, reclaim time.Duration, method string, objects []*unstructured.Unstructured) {
	t.Helper()
	objects, err := Template(args...)
	if err != nil {
		t.Fatal(err)
	}
	config, err := SchedulerConfig(objects)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "scheduler-config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, warnings, err := app.LoadPolicy(path); err != nil || len(warnings) > 0 {
		t.Fatalf("the scheduler refuses the rendered configuration: %v %v\n%s", err, warnings, config)
	}
	cfg, _, err := conf.Load([]byte(config), scheduler.Known(plugins.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range cfg.Plugins() {
		if p.Name == minruntime.Name {
			preempt, _ = conf.ParseNonNegativeDuration("", p.Arguments[minruntime.ArgDefaultPreemptMinRuntime])
			reclaim, _ = conf.ParseNonNegativeDuration("", p.Arguments[minruntime.ArgDefaultReclaimMinRuntime])
			return preempt, reclaim, p.Arguments[minruntime.ArgReclaimResolveMethod], objects
		}
	}
	t.Fatalf("no minruntime plugin in the rendered configuration:\n%s", config)
	return
}

func checksum(t *testing.T, objects []*unstructured.Unstructured) string {
	t.Helper()
	deployment := Find(objects, "Deployment", "kai")
	if deployment == nil {
		t.Fatal("no Deployment rendered")
	}
	sum, _, _ := unstructured.NestedString(deployment.Object, "spec", "template", "metadata", "annotations", "checksum/config")
	return sum
}

func TestDefaultValuesRenderAWorkingConfiguration(t *testing.T) {
	preempt, reclaim, method, objects := minRuntimeArgs(t)
	if preempt != 0 || reclaim != 0 || method != "lca" {
		t.Fatalf("defaults: preempt %v, reclaim %v, method %q; want 0s, 0s, lca", preempt, reclaim, method)
	}
	for _, want := range [][2]string{
		{"Deployment", "kai"}, {"ServiceAccount", "kai"}, {"ClusterRole", "kai"}, {"ClusterRoleBinding", "kai"},
		{"Role", "kai-leader-election"}, {"Service", "kai-metrics"}, {"PriorityClass", "train"},
		{"PriorityClass", "inference"}, {"Queue", "default-parent-queue"}, {"Queue", "default-queue"},
	} {
		if Find(objects, want[0], want[1]) == nil {
			t.Errorf("%s %s is not rendered", want[0], want[1])
		}
	}
	if keep := Find(objects, "Queue", "default-queue").GetAnnotations()["helm.sh/resource-policy"]; keep != "keep" {
		t.Error("the default queues must survive an uninstall")
	}
	deployment := Find(objects, "Deployment", "kai").Object
	containers, _, _ := unstructured.NestedSlice(deployment, "spec", "template", "spec", "containers")
	flags := strings.Join(toStrings(containers[0].(map[string]any)["args"]), " ")
	if !strings.Contains(flags, "--leader-elect=true") || !strings.Contains(flags, "--leader-elect-id=kai") {
		t.Errorf("even one replica elects a leader (a rollout briefly runs two), under the release's own Lease: %s", flags)
	}
	if !strings.Contains(flags, "--dispatch-workers=64") || !strings.Contains(flags, "--status-workers=64") {
		t.Errorf("binds, evictions and status writes go off the cycle by default: %s", flags)
	}
}

func TestCustomValuesReachTheScheduler(t *testing.T) {
	_, _, _, defaults := minRuntimeArgs(t)
	preempt, reclaim, method, objects := minRuntimeArgs(t,
		"--set", "minRuntime.defaultPreemptMinRuntime=10m",
		"--set", "minRuntime.defaultReclaimMinRuntime=1d",
		"--set", "minRuntime.reclaimResolveMethod=queue",
		"--set", "replicas=2")
	if preempt != 10*time.Minute || reclaim != 24*time.Hour || method != "queue" {
		t.Fatalf("got preempt %v, reclaim %v, method %q", preempt, reclaim, method)
	}
	if checksum(t, objects) == checksum(t, defaults) {
		t.Error("a configuration change must change the checksum annotation, so that the pods roll")
	}
	if replicas, _, _ := unstructured.NestedFieldNoCopy(Find(objects, "Deployment", "kai").Object, "spec", "replicas"); fmt.Sprint(replicas) != "2" {
		t.Errorf("replicas = %v, want 2", replicas)
	}
}

// Escalation's values reach the minruntime plugin only when it is on, and the scheduler
// accepts what the chart renders (minRuntimeArgs loads it as the binary would).
func TestEscalationValuesReachTheScheduler(t *testing.T) {
	for _, tt := range []struct {
		sets []string
		want string // the escalation arguments, "" for none
	}{
		{nil, ""},
		{[]string{"minRuntime.escalationFactor=2", "minRuntime.escalationCeiling=4h"}, "2 4h"},
		{[]string{"minRuntime.escalationFactor=1.5", "minRuntime.escalationCeiling=1d"}, "1.5 1d"},
	} {
		var args []string
		for _, set := range tt.sets {
			args = append(args, "--set", set)
		}
		_, _, _, objects := minRuntimeArgs(t, args...)
		config, err := SchedulerConfig(objects)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _, err := conf.Load([]byte(config), scheduler.Known(plugins.NewRegistry()))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range cfg.Plugins() {
			if p.Name != minruntime.Name {
				continue
			}
			got := strings.TrimSpace(p.Arguments[minruntime.ArgEscalationFactor] + " " + p.Arguments[minruntime.ArgEscalationCeiling])
			if got != tt.want {
				t.Errorf("%v: escalation arguments %q, want %q", tt.sets, got, tt.want)
			}
		}
	}
}

func TestBadValuesAreRefusedBeforeInstalling(t *testing.T) {
	for _, tt := range []struct{ set, want string }{
		{"minRuntime.defaultReclaimMinRuntime=-5m", "defaultReclaimMinRuntime"},
		{"minRuntime.defaultPreemptMinRuntime=ten", "defaultPreemptMinRuntime"},
		{"minRuntime.reclaimResolveMethod=nearest", "reclaimResolveMethod"},
		{"replicas=0", "replicas"},
		{"dispatchWorkers=-1", "dispatchWorkers"},
		{"statusWorkers=0", "statusWorkers"},
		{"scheduler.maxConsolidationPreemptees=-1", "scheduler.maxConsolidationPreemptees: -1 must be a whole number, 0 or more"},
		{"scheduler.maxConsolidationPreemptees=many", `scheduler.maxConsolidationPreemptees: "many" must be a whole number, 0 or more`},
		{"scheduler.maxConsolidationPreemptees=null", "scheduler.maxConsolidationPreemptees: null must be a whole number, 0 or more"},
		{"nodePools.a100.scheduler.maxConsolidationPreemptees=-2", "nodePools.a100.scheduler.maxConsolidationPreemptees: -2 must be a whole number, 0 or more"},
		{"minRuntime.escalationFactor=0.5", "minRuntime.escalationFactor"},
		{"minRuntime.escalationFactor=twice", "minRuntime.escalationFactor"},
		{"minRuntime.escalationFactor=2", "minRuntime.escalationCeiling: escalationFactor 2 needs a ceiling above 0s"},
		{"minRuntime.escalationCeiling=soon", "minRuntime.escalationCeiling"},
	} {
		t.Run(tt.set, func(t *testing.T) {
			_, err := Template("--set", tt.set)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("helm accepted %s or did not name %s: %v", tt.set, tt.want, err)
			}
		})
	}
}

// containerArgs returns the args of the scheduler container of a rendered Deployment.
func containerArgs(t *testing.T, objects []*unstructured.Unstructured, name string) []string {
	t.Helper()
	deployment := Find(objects, "Deployment", name)
	if deployment == nil {
		t.Fatalf("no Deployment %s rendered", name)
	}
	containers, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	return toStrings(containers[0].(map[string]any)["args"])
}

// scheduler.maxConsolidationPreemptees reaches the scheduler as --max-consolidation-preemptees:
// upstream's 16 by default, a value set (0 turns consolidation off), and a pool's own.
func TestMaxConsolidationPreempteesReachesTheScheduler(t *testing.T) {
	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, []byte("scheduler:\n  maxConsolidationPreemptees: 4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want map[string]string // Deployment to its flag
	}{
		{"default", nil, map[string]string{"kai": "--max-consolidation-preemptees=16"}},
		{"set", []string{"--set", "scheduler.maxConsolidationPreemptees=3"}, map[string]string{"kai": "--max-consolidation-preemptees=3"}},
		{"off", []string{"--set", "scheduler.maxConsolidationPreemptees=0"}, map[string]string{"kai": "--max-consolidation-preemptees=0"}},
		{"from a values file", []string{"-f", values}, map[string]string{"kai": "--max-consolidation-preemptees=4"}},
		{"a pool's own", []string{"--set", "nodePools.a100.scheduler.maxConsolidationPreemptees=0", "--set", "nodePools.h100.replicas=1"},
			map[string]string{"kai": "--max-consolidation-preemptees=16", "kai-a100": "--max-consolidation-preemptees=0", "kai-h100": "--max-consolidation-preemptees=16"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objects, err := Template(tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tt.want {
				var got []string
				for _, arg := range containerArgs(t, objects, name) {
					if strings.HasPrefix(arg, "--max-consolidation-preemptees") {
						got = append(got, arg)
					}
				}
				if !slices.Equal(got, []string{want}) {
					t.Errorf("%s: args %q, want %s once", name, got, want)
				}
			}
		})
	}
}

func toStrings(v any) []string {
	var out []string
	if list, ok := v.([]any); ok {
		for _, s := range list {
			out = append(out, s.(string))
		}
	}
	return out
}

func TestSchedulePeriodMustBeAPositiveDurationTheBinaryAccepts(t *testing.T) {
	for _, bad := range []string{"1d", "0s", "0", "-1s", "soon"} {
		if _, err := Template("--set", "schedulePeriod="+bad); err == nil || !strings.Contains(err.Error(), "schedulePeriod") {
			t.Errorf("schedulePeriod=%s was accepted or not named: %v", bad, err)
		}
	}
	if _, err := Template("--set", "schedulePeriod=500ms"); err != nil {
		t.Errorf("500ms is a fine period: %v", err)
	}
}

// With a Prometheus Operator, one value makes it scrape the scheduler: the ServiceMonitor
// selects the metrics Service by its labels and scrapes its metrics port.
func TestServiceMonitorScrapesTheMetricsService(t *testing.T) {
	objects, err := Template()
	if err != nil {
		t.Fatal(err)
	}
	if Find(objects, "ServiceMonitor", "kai") != nil {
		t.Fatal("a ServiceMonitor by default: clusters without the Prometheus Operator could not install the chart")
	}
	objects, err = Template("--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.serviceMonitor.labels.release=prom")
	if err != nil {
		t.Fatal(err)
	}
	monitor := Find(objects, "ServiceMonitor", "kai")
	service := Find(objects, "Service", "kai-metrics")
	if monitor == nil || service == nil {
		t.Fatalf("want a ServiceMonitor and the metrics Service, got monitor %v, service %v", monitor != nil, service != nil)
	}
	selector, _, _ := unstructured.NestedStringMap(monitor.Object, "spec", "selector", "matchLabels")
	labels := service.GetLabels()
	for k, v := range selector {
		if labels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%s, the Service has %q", k, v, labels[k])
		}
	}
	if len(selector) == 0 {
		t.Error("the ServiceMonitor selects every Service")
	}
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	if len(endpoints) != 1 || endpoints[0].(map[string]any)["port"] != "metrics" {
		t.Errorf("endpoints %v, want the metrics port", endpoints)
	}
	if monitor.GetLabels()["release"] != "prom" {
		t.Errorf("labels %v, want release=prom for the Prometheus that selects it", monitor.GetLabels())
	}
	if _, err := Template("--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.service.enabled=false"); err == nil ||
		!strings.Contains(err.Error(), "metrics.serviceMonitor.enabled needs metrics.service.enabled") {
		t.Errorf("a ServiceMonitor without the Service it scrapes was not refused clearly: %v", err)
	}
}

// The first thing an operator types: `--set minRuntime.defaultReclaimMinRuntime=0`. Helm reads
// 0 as a number; the chart takes it as the duration it means.
func TestZeroAsANumberIsAZeroDuration(t *testing.T) {
	_, reclaim, _, _ := minRuntimeArgs(t, "--set", "minRuntime.defaultReclaimMinRuntime=0", "--set", "minRuntime.defaultPreemptMinRuntime=90s")
	if reclaim != 0 {
		t.Errorf("reclaim min-runtime %v, want 0", reclaim)
	}
}

// Several mistakes are reported together, each by its key with an example of a right value,
// and never as a raw pattern; arguments under the plugin list that minRuntime.* would
// replace are refused rather than dropped.
func TestEveryMistakeIsNamedAtOnce(t *testing.T) {
	_, err := Template("--set", "minRuntime.defaultReclaimMinRuntime=10x", "--set", "schedulePeriod=0s",
		"--set-json", `scheduler.plugins=[{"name":"proportion"},{"name":"minruntime","arguments":{"defaultReclaimMinRuntime":"5m"}}]`)
	if err == nil {
		t.Fatal("the chart accepted three mistakes")
	}
	for _, want := range []string{
		`minRuntime.defaultReclaimMinRuntime: "10x" is not a duration; use a non-negative Go duration such as 0s, 90s, 10m, 1h30m or 1d`,
		`schedulePeriod: "0s" must be a positive Go duration such as 1s or 500ms`,
		"scheduler.plugins: minruntime's arguments come from minRuntime.*",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "^(") || strings.Contains(err.Error(), "'not' failed") {
		t.Errorf("the error shows a schema's internals:\n%v", err)
	}
}

// A values file with mistakes of every kind — values the schema checked before (an unknown
// resolve method, replicas 0, a misspelt key), values only a template can check (durations,
// a period of zero, a ServiceMonitor without its Service), a pool's — is refused in one run
// naming every one: helm stops at a schema failure before any template runs, so the schema
// checks only shapes and the templates every value.
func TestOneRunNamesEveryMistakeOfAValuesFile(t *testing.T) {
	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, []byte(`replicas: 0
statusWorkers: 1.5
scheduler:
  maxConsolidationPreemptees: -1
image:
  tag: 1.10
  pullPolicy: always
schedulePeriod: 0s
minRuntime:
  defaultReclaimMinRuntime: 2 hours
  defaultPreemptMinRutime: 10m
  reclaimResolveMethod: nearest
metrics:
  service:
    enabled: false
  serviceMonitor:
    enabled: true
    interval: 30
defaultPool:
  enable: true
nodePools:
  a100:
    schedulerName: a100-scheduler
    schedulePeriod: 1d
    minRuntime:
      reclaimResolveMethod: closest
`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Template("-f", values)
	if err == nil {
		t.Fatal("the chart accepted a values file full of mistakes")
	}
	for _, want := range []string{
		// Checked by the schema before, which hid every line below them.
		`minRuntime.reclaimResolveMethod: "nearest" must be lca or queue`,
		"replicas: 0 must be a whole number, 1 or more",
		"statusWorkers: 1.5 must be a whole number, 1 or more",
		"scheduler.maxConsolidationPreemptees: -1 must be a whole number, 0 or more",
		`image.pullPolicy: "always" must be Always, IfNotPresent or Never`,
		"image.tag: 1.1 must be a string; quote it",
		"minRuntime.defaultPreemptMinRutime: not a key of minRuntime, which has defaultPreemptMinRuntime, defaultReclaimMinRuntime, reclaimResolveMethod, escalationFactor and escalationCeiling",
		"defaultPool.enable: not a key of defaultPool, which has enabled",
		"metrics.serviceMonitor.interval: 30 must be a Prometheus duration such as 30s or 1m",
		"nodePools.a100.schedulerName: a pool cannot set schedulerName; it sets image, replicas, schedulePeriod,",
		`nodePools.a100.minRuntime.reclaimResolveMethod: "closest" must be lca or queue`,
		// Checked by the templates.
		`minRuntime.defaultReclaimMinRuntime: "2 hours" is not a duration`,
		`schedulePeriod: "0s" must be a positive Go duration`,
		"metrics.serviceMonitor.enabled needs metrics.service.enabled",
		`nodePools.a100.schedulePeriod: "1d" must be a positive Go duration`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
	for _, internal := range []string{"don't meet the specifications", "at '/", "^(", "'not' failed"} {
		if strings.Contains(err.Error(), internal) {
			t.Errorf("the error shows a schema's internals (%q):\n%v", internal, err)
		}
	}
}

// What the schema still checks is the shape the templates walk; every such mistake is named
// at once, as helm reports a schema's failures.
func TestValuesOfTheWrongShapeAreNamedByTheSchema(t *testing.T) {
	_, err := Template("--set", "minRuntime=1h", "--set-json", `scheduler.plugins=["minruntime"]`)
	if err == nil {
		t.Fatal("the chart accepted values of the wrong shape")
	}
	for _, want := range []string{"at '/minRuntime': got string, want object", "at '/scheduler/plugins/0': got string, want object"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
}

// Each nodePools entry renders a scheduler of its own: its Deployment serving the pool, its
// Lease, its configuration with the entry's values over the top-level ones, its metrics
// Service; selectors never overlap, so no Deployment adopts another's pods.
func TestNodePoolsRenderOneSchedulerEach(t *testing.T) {
	objects, err := Template("--set", "nodePools.a100.minRuntime.defaultReclaimMinRuntime=1h",
		"--set", "nodePools.h100.replicas=2", "--set", "minRuntime.defaultPreemptMinRuntime=5m")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, pool       string
		preempt, reclaim time.Duration
		replicas         string
	}{
		{"kai", "", 5 * time.Minute, 0, "1"},
		{"kai-a100", "a100", 5 * time.Minute, time.Hour, "1"},
		{"kai-h100", "h100", 5 * time.Minute, 0, "2"},
	} {
		deployment := Find(objects, "Deployment", tt.name)
		if deployment == nil {
			t.Fatalf("no Deployment %s", tt.name)
		}
		containers, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
		flags := strings.Join(toStrings(containers[0].(map[string]any)["args"]), " ")
		if !strings.Contains(flags, "--leader-elect-id="+tt.name) || !strings.Contains(flags, "--nodepool-label-key=kai.scheduler/node-pool") {
			t.Errorf("%s: args %s, want its own Lease and the pool label", tt.name, flags)
		}
		if serves := strings.Contains(flags, "--partition-label-value="); serves != (tt.pool != "") ||
			tt.pool != "" && !strings.Contains(flags, "--partition-label-value="+tt.pool) {
			t.Errorf("%s: args %s, want it to serve pool %q", tt.name, flags, tt.pool)
		}
		if replicas, _, _ := unstructured.NestedFieldNoCopy(deployment.Object, "spec", "replicas"); fmt.Sprint(replicas) != tt.replicas {
			t.Errorf("%s: replicas %v, want %s", tt.name, replicas, tt.replicas)
		}
		selector, _, _ := unstructured.NestedStringMap(deployment.Object, "spec", "selector", "matchLabels")
		if selector["app.kubernetes.io/instance"] != tt.name {
			t.Errorf("%s: selector %v, want one of its own", tt.name, selector)
		}
		cm := Find(objects, "ConfigMap", tt.name+"-config")
		if cm == nil {
			t.Fatalf("no ConfigMap %s-config", tt.name)
		}
		config, _, _ := unstructured.NestedString(cm.Object, "data", "scheduler-config.yaml")
		policy, warnings, err := scheduler.LoadPolicy([]byte(config))
		if err != nil || len(warnings) > 0 {
			t.Fatalf("%s: the scheduler refuses its configuration: %v %v", tt.name, err, warnings)
		}
		for _, p := range policy.Plugins {
			if m, ok := p.(*minruntime.Plugin); ok && (m.Defaults().Preempt != tt.preempt || m.Defaults().Reclaim != tt.reclaim) {
				t.Errorf("%s: defaults %+v, want preempt %v reclaim %v", tt.name, m.Defaults(), tt.preempt, tt.reclaim)
			}
		}
		if Find(objects, "Service", tt.name+"-metrics") == nil {
			t.Errorf("no metrics Service for %s", tt.name)
		}
	}

	// An entry may set any single key: what it leaves out is the top level's.
	objects, err = Template("--set", "nodePools.a100.image.tag=v2", "--set", "nodePools.a100.scheduler.actions=allocate")
	if err != nil {
		t.Fatalf("a partial override is refused: %v", err)
	}
	a100, _ := SchedulerConfigOf(objects, "kai-a100-config")
	if !strings.Contains(a100, `actions: "allocate"`) || !strings.Contains(a100, "name: minruntime") {
		t.Errorf("a100's configuration should keep the top-level plugins under its own actions:\n%s", a100)
	}

	objects, err = Template("--set", "nodePools.a100.replicas=1", "--set", "defaultPool.enabled=false")
	if err != nil {
		t.Fatal(err)
	}
	if Find(objects, "Deployment", "kai") != nil || Find(objects, "Deployment", "kai-a100") == nil {
		t.Error("with defaultPool.enabled=false only the pools' schedulers are rendered")
	}
	// The schedulers read their own ConfigMaps (to post events on them), and no other.
	role := Find(objects, "Role", "kai-leader-election")
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	var readable []string
	for _, rule := range rules {
		if strings.Join(toStrings(rule.(map[string]any)["resources"]), ",") == "configmaps" {
			readable = append(readable, toStrings(rule.(map[string]any)["resourceNames"])...)
		}
	}
	if !slices.Equal(readable, []string{"kai-a100-config"}) {
		t.Errorf("the schedulers may read ConfigMaps %v, want only kai-a100-config", readable)
	}
	if _, err := Template("--set", "defaultPool.enabled=false"); err == nil || !strings.Contains(err.Error(), "no scheduler would run") {
		t.Errorf("a release without any scheduler must be refused (and its RBAC rule would name no ConfigMap, granting all): %v", err)
	}
}

// A pool's mistakes are named under the pool's key, every one at once; a mistake of the
// top-level values, which every pool inherits, once.
func TestNodePoolMistakesNameThePool(t *testing.T) {
	_, err := Template("--set", "nodePools.a100.minRuntime.defaultReclaimMinRuntime=soon",
		"--set", "nodePools.b.schedulePeriod=0s", "--set", "minRuntime.defaultPreemptMinRuntime=-1",
		"--set", "nodePools.A_1.replicas=1")
	if err == nil {
		t.Fatal("the values were accepted")
	}
	for _, want := range []string{
		`nodePools.a100.minRuntime.defaultReclaimMinRuntime: "soon" is not a duration`,
		`nodePools.b.schedulePeriod: "0s" must be a positive Go duration`,
		`nodePools: "A_1" is not a pool name this chart can use`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if n := strings.Count(err.Error(), `defaultPreemptMinRuntime: "-1"`); n != 1 {
		t.Errorf("the inherited mistake is named %d times, want once:\n%v", n, err)
	}
	if _, err := Template("--set", "nodePoolLabelKey=", "--set", "nodePools.a100.replicas=1"); err == nil ||
		!strings.Contains(err.Error(), "nodePools: needs nodePoolLabelKey") {
		t.Errorf("pools without a pool label must be refused (their schedulers would not start): %v", err)
	}
}

// The chart's default queues are upstream's — quota 0, limit -1, over-quota weight 1 for every
// resource — so that work without a queue label is owed nothing and cannot cancel another
// team's quota, and make run-local (which applies docs/examples/queues-default.yaml) starts
// the very same queues.
func TestDefaultQueuesAreOwedNothingAsUpstream(t *testing.T) {
	rendered, err := Template()
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(ChartDir(), "..", "..", "docs", "examples", "queues-default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	example, err := Decode(string(text))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"quota": int64(0), "limit": int64(-1), "overQuotaWeight": int64(1)}
	for _, name := range []string{"default-parent-queue", "default-queue"} {
		chart, local := Find(rendered, "Queue", name), Find(example, "Queue", name)
		if chart == nil || local == nil {
			t.Fatalf("Queue %s: rendered by the chart %v, in queues-default.yaml %v", name, chart != nil, local != nil)
		}
		for _, resource := range []string{"gpu", "cpu", "memory"} {
			got, _, _ := unstructured.NestedMap(chart.Object, "spec", "resources", resource)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("the chart's %s %s is %v, want %v", name, resource, got, want)
			}
		}
		chartSpec, _, _ := unstructured.NestedMap(chart.Object, "spec")
		localSpec, _, _ := unstructured.NestedMap(local.Object, "spec")
		delete(chartSpec, "displayName")
		delete(localSpec, "displayName")
		if fmt.Sprint(chartSpec) != fmt.Sprint(localSpec) {
			t.Errorf("%s: the chart renders %v, make run-local applies %v", name, chartSpec, localSpec)
		}
	}
}
