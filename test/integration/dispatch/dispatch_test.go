package dispatch

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/apiwriter"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

const (
	pods  = 500
	nodes = 63 // 8 GPUs each: room for 504 single-GPU pods
)

// BenchmarkBind500 times, from the moment a cycle's decisions are made, how long until the
// API server shows all 500 pods bound; cycle-ms is how long the cycle itself was held up
// sending them. Creating the pods is setup and not timed.
func BenchmarkBind500(b *testing.B) {
	env, err := testenv.Start()
	if err != nil {
		b.Skip(err) // needs KUBEBUILDER_ASSETS (make test builds the control plane)
	}
	defer func() { _ = env.Stop() }()
	ctx := context.Background()
	clientset := kubernetes.NewForConfigOrDie(env.Config)
	for i := range nodes {
		if err := testenv.CreateNode(ctx, clientset, fmt.Sprintf("node-%02d", i), 8); err != nil {
			b.Fatal(err)
		}
	}
	if err := env.Client.Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}); err != nil {
		b.Fatal(err)
	}
	for _, workers := range []int{0, 4, 16, 64} {
		name := fmt.Sprintf("workers=%d", workers)
		if workers == 0 {
			name = "within-cycle"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				infos := createPods(b, env.Client)
				effects, wait, stop := newEffects(env.Client, workers)
				b.StartTimer()
				began := time.Now()
				for i, p := range infos {
					if err := effects.Bind(ctx, p, fmt.Sprintf("node-%02d", i%nodes)); err != nil {
						b.Fatal(err)
					}
				}
				cycle := time.Since(began)
				wait()
				b.StopTimer()
				stop()
				if n := boundPods(b, env.Client); n != pods {
					b.Fatalf("%d of %d pods bound", n, pods)
				}
				b.ReportMetric(float64(cycle.Microseconds())/1000, "cycle-ms/op")
				deletePods(b, env.Client)
				b.StartTimer()
			}
		})
	}
}

// newEffects returns the effects under test, a wait for everything sent to land, and a stop.
func newEffects(c client.Client, workers int) (framework.Effects, func(), func()) {
	direct := &apiwriter.Effects{Client: c, Clock: clock.RealClock{}, Overlay: store.NewOverlay(clock.RealClock{})}
	if workers == 0 {
		return direct, func() {}, func() {}
	}
	d := apiwriter.NewDispatcher(direct, workers)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = d.Start(ctx); close(done) }()
	return d, d.Wait, func() { cancel(); <-done }
}

func createPods(b *testing.B, c client.Client) []*model.PodInfo {
	infos := make([]*model.PodInfo, 0, pods)
	for i := range pods {
		pod := builders.MakePod("bench", fmt.Sprintf("p%03d", i)).GPUs(1).Obj()
		if err := c.Create(context.Background(), pod); err != nil {
			b.Fatal(err)
		}
		infos = append(infos, &model.PodInfo{Namespace: "bench", Name: pod.Name, UID: string(pod.UID), Job: "bench/job"})
	}
	return infos
}

func boundPods(b *testing.B, c client.Client) int {
	list := &v1.PodList{}
	if err := c.List(context.Background(), list, client.InNamespace("bench")); err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, p := range list.Items {
		if p.Spec.NodeName != "" {
			n++
		}
	}
	return n
}

func deletePods(b *testing.B, c client.Client) {
	zero := int64(0)
	if err := c.DeleteAllOf(context.Background(), &v1.Pod{}, client.InNamespace("bench"), client.GracePeriodSeconds(zero)); err != nil {
		b.Fatal(err)
	}
	for list := (&v1.PodList{}); ; {
		if err := c.List(context.Background(), list, client.InNamespace("bench")); err != nil {
			b.Fatal(err)
		}
		if len(list.Items) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond) // pods without a kubelet go at once; the cache may lag
	}
}
