package topology

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kai-minruntime/kai-scheduler/pkg/app"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

// topologyCRD is the Topology CRD's file in the chart.
var topologyCRD = filepath.Join(testenv.CRDDir(), "kai.scheduler_topologies.yaml")

// lines is a log the scheduler writes to, read while it runs.
type lines struct {
	mu   sync.Mutex
	text []string
}

func (l *lines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.text = append(l.text, args)
	}, funcr.Options{})
}

// containing returns the lines that contain s.
func (l *lines) containing(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var found []string
	for _, line := range l.text {
		if strings.Contains(line, s) {
			found = append(found, line)
		}
	}
	return found
}

// cycles counts the scheduling cycles a registry has recorded.
func cycles(registry *prometheus.Registry) func() uint64 {
	return func() uint64 {
		families, err := registry.Gather()
		Expect(err).NotTo(HaveOccurred())
		for _, family := range families {
			if family.GetName() == "kai_scheduler_cycle_duration_seconds" {
				return family.GetMetric()[0].GetHistogram().GetSampleCount()
			}
		}
		return 0
	}
}

// runScheduler runs the scheduler as the binary does against cfg until it has run cycles (it
// runs none before every informer it waits for has synced), then stops it, and returns what
// it logged.
func runScheduler(cfg *rest.Config) *lines {
	GinkgoHelper()
	logged := &lines{}
	opts := app.DefaultOptions()
	opts.SchedulePeriod = 100 * time.Millisecond
	opts.ListenAddress, opts.HealthAddress = "0", "0"
	registry := prometheus.NewRegistry()
	opts.MetricsRegistry = registry
	runCtx, cancel := context.WithCancel(logr.NewContext(ctx, logged.logger()))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer GinkgoRecover()
		done <- app.Run(runCtx, cfg, opts)
	}()
	Eventually(func(g Gomega) {
		g.Expect(done).NotTo(Receive(), "the scheduler stopped")
		g.Expect(cycles(registry)()).To(BeNumerically(">=", 2))
	}).WithTimeout(30*time.Second).WithPolling(50*time.Millisecond).Should(Succeed(),
		"the scheduler runs no cycle: it waits for an informer that cannot sync")
	cancel()
	Eventually(done).WithTimeout(10 * time.Second).Should(Receive(BeNil()))
	return logged
}

var _ = Describe("The scheduler", func() {
	// A user who upgraded the binary and not the CRDs: the scheduler runs, without
	// topologies, and says why once. Once the CRD is applied, a restarted scheduler watches
	// Topologies and says nothing.
	It("runs on a cluster without the Topology CRD, warning once, and without the warning once the CRD is there", func() {
		var others []string
		entries, err := os.ReadDir(testenv.CRDDir())
		Expect(err).NotTo(HaveOccurred())
		for _, e := range entries {
			if path := filepath.Join(testenv.CRDDir(), e.Name()); path != topologyCRD {
				others = append(others, path)
			}
		}
		Expect(others).NotTo(BeEmpty())
		// A control plane of its own: the suite's has the Topology CRD.
		without := &envtest.Environment{
			CRDInstallOptions:     envtest.CRDInstallOptions{Paths: others, ErrorIfPathMissing: true},
			BinaryAssetsDirectory: os.Getenv("KUBEBUILDER_ASSETS"),
		}
		cfg, err := without.Start()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(without.Stop)

		warning := "topology constraints cannot be honoured: the CRD topologies.kai.scheduler is not served"
		Expect(runScheduler(cfg).containing(warning)).To(HaveLen(1), "one warning, naming the CRD")

		_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{topologyCRD}, ErrorIfPathMissing: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(runScheduler(cfg).containing("topologies.kai.scheduler")).To(BeEmpty())
	})
})
