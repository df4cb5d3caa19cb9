package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/app"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

var (
	env       *testenv.Environment
	k8sClient client.Client
	clientset kubernetes.Interface
	suiteCtx  context.Context
	// kwok plays the suite's nodes: it runs the pods bound to them and removes deleted pods.
	kwok *testenv.KWOK
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	RunSpecs(t, "kai-scheduler end to end against a real API server")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(klog.NewKlogr())
	var err error
	env, err = testenv.StartWith(testenv.Options{WorkloadCRDs: true})
	Expect(err).NotTo(HaveOccurred())
	// Cleanups run last registered first: kwok stops before the control plane it talks to.
	DeferCleanup(env.Stop)
	k8sClient = env.Client
	clientset, err = kubernetes.NewForConfig(env.Config)
	Expect(err).NotTo(HaveOccurred())
	var cancel context.CancelFunc
	suiteCtx, cancel = context.WithCancel(context.Background())
	DeferCleanup(cancel)
	kwok, err = env.StartKWOK(GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(kwok.Stop)
	for name, value := range map[string]int32{"train": 50, "build-preemptible": 75, "build": 100, "inference": 125} {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		Expect(k8sClient.Create(suiteCtx, pc)).To(Succeed())
	}
})

// Every spec ends by checking that kwok still runs: once it has died no pod starts or goes,
// and the specs after would fail on timeouts that do not say why.
var _ = AfterEach(func() {
	Expect(kwok.Err()).NotTo(HaveOccurred())
})

// startScheduler runs the scheduler in the background as the binary would, with a short
// period, and returns a function that stops it (like SIGTERM) and waits until it has.
func startScheduler(opts app.Options) (stop func()) {
	return startSchedulerOn(env.Config, opts)
}

// startSchedulerOn is startScheduler against a given API server and identity.
func startSchedulerOn(cfg *rest.Config, opts app.Options) (stop func()) {
	ctx, cancel := context.WithCancel(suiteCtx)
	done := make(chan error, 1)
	go func() {
		defer GinkgoRecover()
		done <- app.Run(ctx, cfg, opts)
	}()
	return func() {
		cancel()
		Eventually(done).Should(Receive(BeNil()), "the scheduler stops cleanly")
	}
}

// schedulerOptions are the binary's defaults with a fast period, no listeners, and a metrics
// registry of the scheduler's own (read with metric).
func schedulerOptions(config string) app.Options {
	opts := app.DefaultOptions()
	opts.SchedulePeriod = 200 * time.Millisecond
	opts.ListenAddress, opts.HealthAddress = "0", "0"
	opts.MetricsRegistry = prometheus.NewRegistry()
	opts.SchedulerConf = config
	return opts
}

// schedulerOptionsWith is schedulerOptions for a scheduler that reads config, written to a
// file of the spec's own.
func schedulerOptionsWith(config string) app.Options {
	file := filepath.Join(GinkgoT().TempDir(), "scheduler-config.yaml")
	Expect(os.WriteFile(file, []byte(config), 0o600)).To(Succeed())
	return schedulerOptions(file)
}
