package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/kai-minruntime/kai-scheduler/pkg/app"
	"github.com/kai-minruntime/kai-scheduler/pkg/kubectlkai"
)

// TestDemoShowsMinRuntimeAtWork runs make run-local's demo with short times: the reclaim
// must wait for the research job's protection, then happen, and production must run.
func TestDemoShowsMinRuntimeAtWork(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	events := make(chan string, 1000)
	done := make(chan error, 1)
	var out syncBuffer // the demo's own printout, shown if the test fails
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the demo printed:\n%s", out.String())
		}
	})
	metricsAddress, healthAddress, dir := freeAddress(t), freeAddress(t), t.TempDir()
	stopped := make(chan struct{})
	go func() {
		done <- runDemo(ctx, demoOptions{MinRuntime: 6 * time.Second, BurstAfter: time.Second, Dir: dir,
			MetricsAddress: metricsAddress, HealthAddress: healthAddress, Out: &out, Events: events, Clock: clock.RealClock{}})
		close(stopped)
	}()
	// However the test ends, the demo stops its kube-apiserver, etcd, KWOK and scheduler
	// before the test binary exits (and before its directory goes): a failed run left them
	// running.
	t.Cleanup(func() { cancel(); <-stopped })
	waitFor := func(text string) string { return waitForLine(t, events, done, text) }
	// The printed kubectl kai explain commands work as printed, against the configuration
	// run-local installed where the chart does: while research runs, its protection comes
	// from its queue.
	waitForOutput(t, &out, "Press Ctrl-C")
	explain := explainCommands(t, out.String())
	kubeconfig := filepath.Join(dir, "kubeconfig")
	waitForOutput(t, &out, "podgroup research/pretrain is protected")
	expectAll(t, runExplain(t, explain["research/pretrain"]), "PodGroup research/pretrain",
		"Against reclaim (jobs of other queues; reclaimResolveMethod lca):", "6s from queue research")
	expectAll(t, out.String(), "describe configmap kai-scheduler-config -n kai-scheduler",
		"kai-scheduler running the chart's configuration ("+filepath.Join(dir, "scheduler-config.yaml")+", from ConfigMap kai-scheduler/kai-scheduler-config)")
	waitUntil(t, "the scheduler's ConfigurationLoaded event on its ConfigMap", func() bool { return configurationLoaded(t, kubeconfig) })
	waitFor("production submits serve")
	burstAt := time.Now()
	toldWhy, serving := false, false
	var evictedAt time.Time
	// The victim goes and production runs; one look may find both, told in the order they
	// happened (the timeline's own test checks that order).
	for evictedAt.IsZero() || !serving {
		line := waitFor("")
		if strings.Contains(line, "protected by min-runtime") {
			toldWhy = true
		}
		// The eviction shows as the pod terminating, or gone if it went between two looks.
		if evictedAt.IsZero() && (strings.Contains(line, "pod research/pretrain-0 evicted") || strings.Contains(line, "pod research/pretrain-0 gone")) {
			evictedAt = time.Now()
		}
		if strings.Contains(line, "pod production/serve-0 running") {
			serving = true
		}
	}
	// The story is told in full: research's protection, the reclaim as the scheduler explains
	// it, and the evicted pods coming back, as a Job controller would bring them.
	for _, want := range []string{
		"podgroup research/pretrain is protected; against reclaimers from outside research until",
		"podgroup research/pretrain Reclaimed: Pod pretrain-0 evicted by reclaim for job production/serve: it ran",
		"pod research/pretrain-0 recreated pending by its controller",
	} {
		waitForOutput(t, &out, want)
	}
	pendingAgain := func() bool {
		printed := out.String()
		recreated := strings.Index(printed, "pod research/pretrain-0 recreated")
		return strings.Contains(printed[recreated:], "pod research/pretrain-0 pending")
	}
	waitUntil(t, "the recreated pod seen pending again", pendingAgain)
	t.Logf("the demo printed:\n%s", out.String())
	if !strings.Contains(out.String(), "http://"+metricsAddress+"/metrics") {
		t.Error("the demo does not say where its metrics are")
	}
	if body := httpGet(t, "http://"+healthAddress+"/readyz"); body != "ok" || !strings.Contains(out.String(), "Health: http://"+healthAddress+"/healthz") {
		t.Errorf("the scheduler's /readyz on --health-address answered %q", body)
	}
	// The reclaim shows in the metrics: the evicted job's runtime, and production's wait.
	body := httpGet(t, "http://"+metricsAddress+"/metrics")
	for _, series := range []string{`kai_scheduler_runtime_at_eviction_seconds_count\{action="reclaim"\} [1-9]`,
		`kai_scheduler_min_runtime_wait_seconds_count [1-9]`} {
		if !regexp.MustCompile(series).MatchString(body) {
			t.Errorf("metrics lack %s", series)
		}
	}
	expectAll(t, runExplain(t, explain["production/serve"]), "PodGroup production/serve")
	if waited := evictedAt.Sub(burstAt); waited < 3*time.Second {
		t.Fatalf("research was evicted %v after production asked; its 6s of protection were not respected", waited)
	}
	if !toldWhy {
		t.Error("production's PodGroup never said it waits for protected victims")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// explainCommands finds the kubectl kai explain commands the demo printed, by the PodGroup
// they explain, and checks that each runs kubectl-kai from the repository.
func explainCommands(t *testing.T, printed string) map[string]string {
	t.Helper()
	commands := map[string]string{}
	for _, line := range strings.Split(printed, "\n") {
		if _, args, found := strings.Cut(line, "run ./cmd/kubectl-kai explain pg "); found {
			commands[strings.Fields(args)[0]] = strings.TrimSpace(line)
		}
	}
	for _, pg := range []string{"research/pretrain", "production/serve"} {
		command := commands[pg]
		if want := "go -C " + repoRoot() + " run ./cmd/kubectl-kai explain pg " + pg + " --kubeconfig "; !strings.HasPrefix(command, want) {
			t.Fatalf("the demo prints no %q...; it printed:\n%s", want, printed)
		}
	}
	return commands
}

// runExplain runs a printed kubectl kai command in this process, as kubectl-kai's main would
// (go run would build it first), and returns what it printed.
func runExplain(t *testing.T, command string) string {
	t.Helper()
	_, args, _ := strings.Cut(command, "run ./cmd/kubectl-kai ")
	args, _, _ = strings.Cut(args, " #") // the shell's comment
	var stdout, stderr bytes.Buffer
	if code := kubectlkai.Run(context.Background(), strings.Fields(args), &stdout, &stderr, kubectlkai.Connect, clock.RealClock{}); code != 0 {
		t.Fatalf("%s: exit %d\n%s", command, code, stderr.String())
	}
	return stdout.String()
}

// configurationLoaded tells whether the scheduler posted on its ConfigMap what it runs, as it
// does when told the ConfigMap (the chart's --scheduler-conf-configmap).
func configurationLoaded(t *testing.T, kubeconfig string) bool {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	events, err := clientset.CoreV1().Events("kai-scheduler").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return false
	}
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == "ConfigMap" && e.InvolvedObject.Name == "kai-scheduler-config" && e.Reason == app.ReasonConfigurationLoaded {
			return true
		}
	}
	return false
}

// waitForLine returns the first line containing text. It fails after a minute, or at once
// if the demo stopped, with the demo's own error.
func waitForLine(t *testing.T, events <-chan string, done <-chan error, text string) string {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case line := <-events:
			if strings.Contains(line, text) {
				return line
			}
		case err := <-done:
			t.Fatalf("the demo stopped before printing %q: %v", text, err)
		case <-deadline:
			t.Fatalf("no %q within a minute", text)
		}
	}
}

// waitForOutput waits up to a minute for the demo to have printed text.
func waitForOutput(t *testing.T, out *syncBuffer, text string) {
	t.Helper()
	waitUntil(t, fmt.Sprintf("the demo printing %q", text), func() bool { return strings.Contains(out.String(), text) })
}

// waitUntil waits up to a minute for done to hold, and fails the test naming what if not.
func waitUntil(t *testing.T, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !done(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute", what)
		}
	}
}

// syncBuffer is a bytes.Buffer safe to write from the demo and read from the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// freeAddress returns a loopback address with a port nothing listens on.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
