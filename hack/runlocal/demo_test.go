package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
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
	metricsAddress, dir := freeAddress(t), t.TempDir()
	stopped := make(chan struct{})
	go func() {
		done <- runDemo(ctx, demoOptions{MinRuntime: 6 * time.Second, BurstAfter: time.Second, Dir: dir,
			MetricsAddress: metricsAddress, Out: &out, Events: events})
		close(stopped)
	}()
	// However the test ends, the demo stops its kube-apiserver, etcd, KWOK and scheduler
	// before the test binary exits (and before its directory goes): a failed run left them
	// running.
	t.Cleanup(func() { cancel(); <-stopped })
	waitFor := func(text string) string { return waitForLine(t, events, done, text) }
	waitFor("production submits serve")
	burstAt := time.Now()
	toldWhy, serving := false, false
	var evictedAt time.Time
	// The victim goes and production runs: in that order on the cluster, but the scheduler
	// binds as soon as it sees the victim gone, so one look may show both, listed by name.
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
	// The reclaim shows in the metrics: the evicted job's runtime, and production's wait.
	body := httpGet(t, "http://"+metricsAddress+"/metrics")
	for _, series := range []string{`kai_scheduler_runtime_at_eviction_seconds_count\{action="reclaim"\} [1-9]`,
		`kai_scheduler_min_runtime_wait_seconds_count [1-9]`} {
		if !regexp.MustCompile(series).MatchString(body) {
			t.Errorf("metrics lack %s", series)
		}
	}
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
