package scale

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

// The suite's settings, from the environment (make scale sets them):
//   - SCALE_NODES: simulated nodes of 8 GPUs (default 50: make test's invariants-only run);
//   - SCALE_SCHEDULER: the kai-scheduler binary to measure (default: built from this tree),
//     so that an older commit's binary can be measured on the same machine in turn;
//   - SCALE_LABEL: names the binary in the results (default "this-tree");
//   - SCALE_OUTPUT: where results go (default _output/scale/<label>-<nodes>);
//   - SCALE_ARGS: more scheduler flags, space-separated, after the chart's (to measure a
//     setting: SCALE_ARGS=--dispatch-workers=64);
//   - SCALE_PROFILE=1: runs the scheduler with --profiling and saves its heap profile at the
//     end of each scenario (<scenario>.heap.pprof; go tool pprof reads it).
var settings struct {
	nodes              int
	binary, label, out string
	args               []string
	profile            bool
	// sharing: the binary knows --gpu-sharing (an older one skips the sharing scenarios).
	sharing bool
}

// cluster is what the whole suite shares: the control plane, KWOK and its nodes, the
// observer, and how the chart runs the scheduler.
var cluster struct {
	ctx       context.Context
	env       *testenv.Environment
	client    client.Client
	clientset kubernetes.Interface
	observer  *observer
	chart     chartRun
	// dir holds the scheduler's kubeconfig, configuration and logs.
	dir, kubeconfig, configFile string

	mu      sync.Mutex
	results []*Result
}

// schedulerNamespace is where the scheduler runs, as the chart installs it: its Lease and the
// ConfigMap it posts events on live there.
const schedulerNamespace = "kai-system"

func TestScale(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	RunSpecs(t, "kai-scheduler at scale against a real API server with KWOK nodes")
}

var _ = BeforeSuite(func() {
	settings.nodes = 50
	if v := os.Getenv("SCALE_NODES"); v != "" {
		n, err := strconv.Atoi(v)
		Expect(err).NotTo(HaveOccurred(), "SCALE_NODES")
		Expect(n).To(BeNumerically(">=", 10), "SCALE_NODES: the scenarios need at least 10 nodes")
		settings.nodes = n
	}
	settings.profile = os.Getenv("SCALE_PROFILE") == "1"
	settings.args = strings.Fields(os.Getenv("SCALE_ARGS"))
	settings.label = os.Getenv("SCALE_LABEL")
	if settings.label == "" {
		settings.label = "this-tree"
	}
	settings.out = os.Getenv("SCALE_OUTPUT")
	if settings.out == "" {
		settings.out = filepath.Join(testenv.RepoRoot(), "_output", "scale", fmt.Sprintf("%s-%d", settings.label, settings.nodes))
	}
	Expect(os.MkdirAll(settings.out, 0o755)).To(Succeed())
	cluster.dir = GinkgoT().TempDir()
	settings.binary = os.Getenv("SCALE_SCHEDULER")
	if settings.binary == "" {
		settings.binary = filepath.Join(cluster.dir, "kai-scheduler")
		build := exec.Command("go", "build", "-o", settings.binary, "./cmd/kai-scheduler")
		build.Dir = testenv.RepoRoot()
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "building the scheduler: %s", out)
	}

	var err error
	cluster.chart, err = renderChart()
	Expect(err).NotTo(HaveOccurred())
	// An older binary, measured for a before/after, gets the chart's arguments it knows: a
	// flag added since (such as --status-workers) would stop it at startup.
	help, _ := exec.Command(settings.binary, "--help").CombinedOutput()
	settings.sharing = strings.Contains(string(help), "--gpu-sharing ")
	if dropped := cluster.chart.keepFlagsIn(string(help)); len(dropped) > 0 {
		GinkgoWriter.Printf("%s does not know %v: run without them\n", settings.binary, dropped)
	}
	cluster.configFile = filepath.Join(cluster.dir, "scheduler-config.yaml")
	Expect(os.WriteFile(cluster.configFile, []byte(cluster.chart.config), 0o600)).To(Succeed())

	cluster.env, err = testenv.Start()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cluster.env.Stop)
	// Cleanups run last first: the observer's watches end before the API server stops.
	ctx, cancel := context.WithCancel(context.Background())
	DeferCleanup(cancel)
	cluster.ctx = ctx
	cluster.kubeconfig = filepath.Join(cluster.dir, "kubeconfig")
	Expect(cluster.env.WriteKubeconfig(cluster.kubeconfig)).To(Succeed())
	kwok, err := cluster.env.StartKWOK(cluster.dir)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(kwok.Stop)

	// The suite writes thousands of objects as fast as the API server takes them.
	cfg := rest.CopyConfig(cluster.env.Config)
	cfg.QPS = -1
	scheme, err := install.Scheme()
	Expect(err).NotTo(HaveOccurred())
	cluster.client, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	cluster.observer = newObserver()
	Expect(cluster.observer.start(ctx, cfg)).To(Succeed())

	cluster.clientset = kubernetes.NewForConfigOrDie(cfg)
	Expect(inParallel(settings.nodes, func(i int) error {
		return testenv.CreateNode(ctx, cluster.clientset, nodeName(i), gpusPerNode)
	})).To(Succeed())
	Eventually(cluster.observer.readyNodes).WithTimeout(5*time.Minute).Should(Equal(settings.nodes), "KWOK reports every node Ready")
	Expect(readyForReservations(ctx, cluster.client, cluster.clientset)).To(Succeed())

	for name, value := range map[string]int32{"train": 50, "build-preemptible": 75, "build": 100, "inference": 125} {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		Expect(cluster.client.Create(ctx, pc)).To(Succeed())
	}
	Expect(cluster.client.Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: schedulerNamespace}})).To(Succeed())
	Expect(cluster.client.Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: schedulerNamespace, Name: "kai-config"},
		Data: map[string]string{"scheduler-config.yaml": cluster.chart.config}})).To(Succeed())
})

var _ = AfterSuite(func() {
	cluster.mu.Lock()
	defer cluster.mu.Unlock()
	if len(cluster.results) > 0 {
		table := resultTable(cluster.results)
		fmt.Fprint(GinkgoWriter, table)
		AddReportEntry("results", table, ReportEntryVisibilityAlways)
		Expect(os.WriteFile(filepath.Join(settings.out, "table.txt"), []byte(table), 0o644)).To(Succeed())
	}
})

// gpusPerNode is what every simulated node has, as on upstream's scale clusters.
const gpusPerNode = 8

func nodeName(i int) string { return fmt.Sprintf("kwok-node-%05d", i) }

// inParallel runs do(0..n-1) from 32 goroutines and returns the first error.
func inParallel(n int, do func(i int) error) error {
	next := make(chan int)
	errs := make(chan error, 32)
	var wg sync.WaitGroup
	for range min(32, n) {
		wg.Go(func() {
			for i := range next {
				if err := do(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}
