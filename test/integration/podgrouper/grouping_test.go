package podgrouper

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/podgrouper"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

// countingOwners counts the owners read from the API server.
type countingOwners struct {
	podgrouper.APIOwners
	reads atomic.Int64
}

func (c *countingOwners) ReadOwner(ctx context.Context, namespace string, ref metav1.OwnerReference) (*unstructured.Unstructured, error) {
	c.reads.Add(1)
	return c.APIOwners.ReadOwner(ctx, namespace, ref)
}

// workloadsFromEnv is GROUPER_WORKLOADS, else a size that keeps make test quick; the figure
// in docs/performance.md is for 1,000 workloads of 10 pods.
func workloadsFromEnv(t *testing.T) int {
	if value := os.Getenv("GROUPER_WORKLOADS"); value != "" {
		n, err := strconv.Atoi(value)
		if err != nil || n < 2 {
			t.Fatalf("GROUPER_WORKLOADS=%q: want a whole number of 2 or more", value)
		}
		return n
	}
	return 100
}

// Pods of many workloads, half batch Jobs and half Deployments (a chain of two owners), all
// created before the grouper starts: every pod gets its workload's PodGroup, each chain of
// owners is read once between the workload's pods, and the rate is logged for
// docs/performance.md.
func TestGroupingManyWorkloadsReadsEachChainOnce(t *testing.T) {
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := env.Client
	const podsPerWorkload = 10
	workloads := workloadsFromEnv(t)
	if err := c.Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "load"}}); err != nil {
		t.Fatal(err)
	}

	created := time.Now()
	owners := make([]client.Object, workloads)
	for i := range workloads {
		if i%2 == 0 {
			job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "load", Name: fmt.Sprintf("job-%d", i)},
				Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](podsPerWorkload), Template: podTemplate(), ManualSelector: ptr.To(true),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"w": strconv.Itoa(i)}}}}
			job.Spec.Template.Labels = map[string]string{"w": strconv.Itoa(i)}
			mustCreate(ctx, t, c, job)
			owners[i] = job
			continue
		}
		labels := map[string]string{"w": strconv.Itoa(i)}
		serving := podTemplate()
		serving.Spec.RestartPolicy = v1.RestartPolicyAlways
		serving.Labels = labels
		deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "load", Name: fmt.Sprintf("serve-%d", i)},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: serving}}
		mustCreate(ctx, t, c, deploy)
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "load", Name: fmt.Sprintf("serve-%d-1", i),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(deploy, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: serving}}
		mustCreate(ctx, t, c, rs)
		owners[i] = rs
	}
	// The pods are created in parallel, as a burst of controllers would.
	var wg sync.WaitGroup
	errs := make(chan error, workloads)
	for i, owner := range owners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range podsPerWorkload {
				pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "load", Name: fmt.Sprintf("%s-%d", owner.GetName(), p),
					OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, owner.GetObjectKind().GroupVersionKind())}},
					Spec: podTemplate().Spec}
				if err := c.Create(ctx, pod); err != nil {
					errs <- fmt.Errorf("workload %d pod %d: %w", i, p, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	pods := workloads * podsPerWorkload
	t.Logf("created %d workloads and %d pods in %s", workloads, pods, time.Since(created).Round(time.Millisecond))

	ctrl.SetLogger(logr.Discard()) // the grouper's own logs are not what this measures
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS = -1 // no client-side throttling: the figure is the grouper's and the API server's
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0", Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	reader := &countingOwners{APIOwners: podgrouper.APIOwners{Reader: mgr.GetAPIReader()}}
	grouper := podgrouper.NewGrouper(reader, clock.RealClock{}, scheduling.NodePool{})
	if err := podgrouper.NewReconciler(mgr.GetClient(), grouper, "kai-scheduler", nil).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	go func() { _ = mgr.Start(ctx) }()
	for {
		// Metadata only, twice a second: the watching must not slow the API server it measures.
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(v1.SchemeGroupVersion.WithKind("PodList"))
		if err := c.List(ctx, list, client.InNamespace("load")); err != nil {
			t.Fatal(err)
		}
		grouped := 0
		for _, pod := range list.Items {
			if pod.Annotations[scheduling.PodGroupNameAnnotation] != "" {
				grouped++
			}
		}
		if grouped == pods {
			break
		}
		if time.Since(started) > 10*time.Minute {
			t.Fatalf("%d of %d pods grouped after 10 minutes", grouped, pods)
		}
		time.Sleep(500 * time.Millisecond)
	}
	took := time.Since(started)
	t.Logf("grouped %d pods of %d workloads in %s: %.0f pods/s; %d owner reads", pods, workloads, took.Round(time.Millisecond),
		float64(pods)/took.Seconds(), reader.reads.Load())

	// One read per owner in each chain: a Job's chain is the Job; a Deployment's pod's is its
	// ReplicaSet and the Deployment.
	if want := int64(workloads/2 + 2*(workloads-workloads/2)); reader.reads.Load() > want {
		t.Errorf("%d owner reads for %d workloads, want at most %d (each chain once)", reader.reads.Load(), workloads, want)
	}
	groups := &v2alpha2.PodGroupList{}
	if err := c.List(ctx, groups, client.InNamespace("load")); err != nil {
		t.Fatal(err)
	}
	if len(groups.Items) != workloads {
		t.Errorf("%d PodGroups for %d workloads, want one each", len(groups.Items), workloads)
	}
	for _, g := range groups.Items {
		want := map[string]int32{"Job": podsPerWorkload, "Deployment": 1}
		if owner := metav1.GetControllerOfNoCopy(&g); owner == nil || g.Spec.MinMember != want[owner.Kind] {
			t.Errorf("PodGroup %s (owner %v) has gang %d, want %d for a Job, 1 for a Deployment", g.Name, owner, g.Spec.MinMember, podsPerWorkload)
		}
	}
}

func podTemplate() v1.PodTemplateSpec {
	return v1.PodTemplateSpec{Spec: v1.PodSpec{SchedulerName: "kai-scheduler", RestartPolicy: v1.RestartPolicyOnFailure,
		Containers: []v1.Container{{Name: "main", Image: "busybox"}}}}
}

func mustCreate(ctx context.Context, t *testing.T, c client.Client, o client.Object) {
	t.Helper()
	if err := c.Create(ctx, o); err != nil {
		t.Fatal(err)
	}
	gvk, err := c.GroupVersionKindFor(o)
	if err != nil {
		t.Fatal(err)
	}
	o.GetObjectKind().SetGroupVersionKind(gvk)
}
