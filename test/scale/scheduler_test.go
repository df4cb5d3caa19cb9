package scale

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kai-minruntime/kai-scheduler/test/helm"
)

// chartRun is how the chart's Deployment runs the scheduler: its arguments and its rendered
// configuration, with the values' defaults.
type chartRun struct {
	args   []string
	config string
}

// renderChart renders the chart with its default values and reads the scheduler's container
// arguments and configuration from it.
func renderChart() (chartRun, error) {
	objects, err := helm.Template()
	if err != nil {
		return chartRun{}, err
	}
	config, err := helm.SchedulerConfig(objects)
	if err != nil {
		return chartRun{}, err
	}
	deployment := helm.Find(objects, "Deployment", "kai")
	if deployment == nil {
		return chartRun{}, fmt.Errorf("the chart renders no Deployment kai")
	}
	containers, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		return chartRun{}, fmt.Errorf("the chart's Deployment has %d containers, want 1", len(containers))
	}
	args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	return chartRun{args: args, config: config}, nil
}

// keepFlagsIn drops the chart's arguments whose flag the scheduler's help text does not
// name, and returns them.
func (c *chartRun) keepFlagsIn(help string) (dropped []string) {
	help += "\n" // the last flag's name ends the text
	c.args = slices.DeleteFunc(c.args, func(a string) bool {
		name, _, _ := strings.Cut(a, "=")
		if strings.Contains(help, name+" ") || strings.Contains(help, name+"\n") {
			return false
		}
		dropped = append(dropped, name)
		return true
	})
	return dropped
}

// schedulerArgs are the chart's arguments for a scheduler running here: its configuration
// file, its namespace, and listeners on free local ports (metrics on metricsPort, health
// off: nothing probes it).
func (c chartRun) schedulerArgs(configFile, kubeconfig, namespace string, metricsPort int) []string {
	args := []string{"--kubeconfig=" + kubeconfig}
	for _, a := range c.args {
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "--scheduler-conf":
			a = name + "=" + configFile
		case "--listen-address":
			a = fmt.Sprintf("%s=127.0.0.1:%d", name, metricsPort)
		case "--health-address":
			a = name + "=0"
		}
		args = append(args, strings.ReplaceAll(a, "$(POD_NAMESPACE)", namespace))
	}
	return args
}

// schedulerProcess is one run of the scheduler binary. While it runs, its peak resident
// memory and its count of API requests are sampled.
type schedulerProcess struct {
	cmd        *exec.Cmd
	log        string
	metricsURL string
	exited     chan struct{}

	mu sync.Mutex
	// peakRSS is the largest VmHWM read (bytes); requests the last count of API requests
	// scraped from its metrics, writes those of them that wrote (POST, PUT, PATCH,
	// DELETE); cycles and cycleSeconds the count and total duration of its scheduling
	// cycles; givenUp the status writes it gave up and dropped the decisions it never sent
	// (0 from a scheduler that serves neither).
	peakRSS              int64
	requests, writes     float64
	cycles, cycleSeconds float64
	givenUp, dropped     float64
}

// startSchedulerProcess starts binary with args, its output going to logFile.
func startSchedulerProcess(binary string, args []string, namespace, logFile string, metricsPort int) (*schedulerProcess, error) {
	out, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	p := &schedulerProcess{cmd: exec.Command(binary, args...), log: logFile, exited: make(chan struct{}),
		metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)}
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.Env = append(os.Environ(), "POD_NAMESPACE="+namespace)
	if err := p.cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	go func() {
		_ = p.cmd.Wait()
		_ = out.Close()
		close(p.exited)
	}()
	go p.sample()
	return p, nil
}

// sample reads the process's peak memory every quarter second and its API requests every
// second, until it exits.
func (p *schedulerProcess) sample() {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-p.exited:
			return
		case <-tick.C:
		}
		if hwm, err := peakRSS(p.cmd.Process.Pid); err == nil {
			p.mu.Lock()
			p.peakRSS = max(p.peakRSS, hwm)
			p.mu.Unlock()
		}
		if n%4 == 0 {
			p.scrapeRequests()
		}
	}
}

// scrapeRequests reads the process's count of API requests (client-go's
// rest_client_requests_total, which controller-runtime serves), its cycles, and the writes
// and decisions it gave up, from its metrics.
func (p *schedulerProcess) scrapeRequests() {
	total, ok := p.scrape("rest_client_requests_total")
	writes, writesOK := p.scrapeWrites()
	cycles, cycleSeconds, cyclesOK := p.scrapeHistogram("kai_scheduler_cycle_duration_seconds")
	givenUp, _ := p.scrape("kai_scheduler_status_writes_given_up_total")
	dropped, _ := p.scrape("kai_scheduler_decisions_dropped_total")
	p.mu.Lock()
	defer p.mu.Unlock()
	p.givenUp, p.dropped = max(p.givenUp, givenUp), max(p.dropped, dropped)
	if ok {
		p.requests = max(p.requests, total)
	}
	if writesOK {
		p.writes = max(p.writes, writes)
	}
	if cyclesOK && cycles >= p.cycles {
		p.cycles, p.cycleSeconds = cycles, cycleSeconds
	}
}

// leading reports whether the process holds the leader Lease and so schedules
// (controller-runtime's leader_election_master_status).
func (p *schedulerProcess) leading() bool {
	status, ok := p.scrape("leader_election_master_status")
	return ok && status == 1
}

// scrapeWrites sums the process's API requests that wrote (client-go's
// rest_client_requests_total by method).
func (p *schedulerProcess) scrapeWrites() (float64, bool) {
	family, ok := p.family("rest_client_requests_total")
	if !ok {
		return 0, false
	}
	total := 0.0
	for _, m := range family.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "method" && slices.Contains([]string{"POST", "PUT", "PATCH", "DELETE"}, l.GetValue()) {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total, true
}

// scrapeHistogram reads the count and sum of a histogram the process serves.
func (p *schedulerProcess) scrapeHistogram(name string) (count, sum float64, ok bool) {
	family, ok := p.family(name)
	if !ok {
		return 0, 0, false
	}
	for _, m := range family.GetMetric() {
		count += float64(m.GetHistogram().GetSampleCount())
		sum += m.GetHistogram().GetSampleSum()
	}
	return count, sum, true
}

// scrape sums the values of a counter or gauge the process serves; false when it could not
// be read.
func (p *schedulerProcess) scrape(name string) (float64, bool) {
	family, ok := p.family(name)
	if !ok {
		return 0, false
	}
	total := 0.0
	for _, m := range family.GetMetric() {
		total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return total, true
}

// family reads one metric family from the process's metrics.
func (p *schedulerProcess) family(name string) (*dto.MetricFamily, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.metricsURL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, false
	}
	family, ok := families[name]
	return family, ok
}

// terminate stops the process as Kubernetes stops a pod (SIGTERM), and returns how long it
// took to exit; after grace it is killed and the time is reported as grace.
func (p *schedulerProcess) terminate(grace time.Duration) (time.Duration, bool) {
	p.scrapeRequests()
	began := time.Now()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return time.Since(began), true
	case <-time.After(grace):
		p.kill()
		return grace, false
	}
}

// saveHeapProfile writes the process's heap profile (it runs with --profiling) to path.
func (p *schedulerProcess) saveHeapProfile(path string) {
	url := strings.TrimSuffix(p.metricsURL, "/metrics") + "/debug/pprof/heap"
	resp, err := http.Get(url) //nolint:noctx // a local process, once
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if out, err := os.Create(path); err == nil {
		_, _ = io.Copy(out, resp.Body)
		_ = out.Close()
	}
}

// kill ends the process at once, as a crash or an OOM kill would.
func (p *schedulerProcess) kill() {
	p.scrapeRequests()
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// peakRSS reads a process's peak resident set size (VmHWM) in bytes.
func peakRSS(pid int) (int64, error) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if value, ok := strings.CutPrefix(scanner.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// freePort returns a local TCP port nothing listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// An older binary is run with the chart's flags it names in its --help and without the
// others, whether a flag comes last in the help or is a prefix of one it knows.
func TestKeepFlagsInDropsOnlyFlagsTheBinaryLacks(t *testing.T) {
	help := `Flags:
      --dispatch-workers-extra int   (a longer flag, not --dispatch-workers)
      --scheduler-conf string        Path to the configuration.
      --listen-address string        Metrics address.
      --v`
	c := chartRun{args: []string{"--scheduler-conf=/etc/x", "--status-workers=64", "--dispatch-workers=64", "--listen-address=:8080", "--v"}}
	dropped := c.keepFlagsIn(help)
	if want := []string{"--status-workers", "--dispatch-workers"}; !slices.Equal(dropped, want) {
		t.Errorf("dropped %v, want %v", dropped, want)
	}
	if want := []string{"--scheduler-conf=/etc/x", "--listen-address=:8080", "--v"}; !slices.Equal(c.args, want) {
		t.Errorf("kept %v, want %v", c.args, want)
	}
}
