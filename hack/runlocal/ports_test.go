package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/clock"
)

// occupy listens on a free loopback port for the test's length, as another process would.
func occupy(t *testing.T) (address, port string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	_, port, _ = net.SplitHostPort(l.Addr().String())
	return l.Addr().String(), port
}

func expectAll(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("lacks %q:\n%s", w, text)
		}
	}
}

// A busy port is named with what needs it and the flag that moves it; the other ports,
// checked too, are given back.
func TestReservePortsNamesABusyPort(t *testing.T) {
	busy, port := occupy(t)
	free := freeAddress(t)
	_, err := reservePorts([]listener{
		{Address: free, What: "the scheduler's /healthz and /readyz", Flag: "--health-address"},
		{Address: busy, What: "the scheduler's Prometheus /metrics", Flag: "--metrics-address"},
	})
	if err == nil {
		t.Fatalf("port %s is busy, yet reservePorts succeeded", port)
	}
	expectAll(t, err.Error(), "nothing was started",
		"port "+port+" is busy (another process listens on "+busy+"): the scheduler's Prometheus /metrics needs it",
		"choose another port with --metrics-address", `make run-local RUN_LOCAL_ARGS="--metrics-address=127.0.0.1:`,
		"--metrics-address=0 to do without the scheduler's Prometheus /metrics")
	if strings.Contains(err.Error(), "--health-address") {
		t.Errorf("the free port is named too:\n%v", err)
	}
	l, err := net.Listen("tcp", free)
	if err != nil {
		t.Fatalf("the free port was not given back after the failure: %v", err)
	}
	_ = l.Close()
}

// Every busy port is named at once, a port asked for twice is told as such, and a port
// switched off ("0") is not checked.
func TestReservePortsNamesEveryProblemAtOnce(t *testing.T) {
	busy, busyPort := occupy(t)
	twice := freeAddress(t)
	_, twicePort, _ := net.SplitHostPort(twice)
	_, err := reservePorts([]listener{
		{Address: busy, What: "the scheduler's Prometheus /metrics", Flag: "--metrics-address"},
		{Address: "0", What: "nothing", Flag: "--off"},
		{Address: twice, What: "the dashboard", Flag: "--dashboard-address"},
		{Address: twice, What: "the scheduler's /healthz and /readyz", Flag: "--health-address"},
		{Address: "18080", What: "the API", Flag: "--api-address"},
	})
	if err == nil {
		t.Fatal("reservePorts succeeded")
	}
	expectAll(t, err.Error(), "port "+busyPort+" is busy",
		"port "+twicePort+" is asked for twice: by --dashboard-address (the dashboard) and by --health-address (the scheduler's /healthz and /readyz)",
		`--api-address "18080"`, "give HOST:PORT")
	if strings.Contains(err.Error(), "--off") {
		t.Errorf("a port switched off was checked:\n%v", err)
	}
}

// Free ports are held until release: nothing can take them between the check and the
// scheduler's start.
func TestReservePortsHoldsThemUntilReleased(t *testing.T) {
	address := freeAddress(t)
	release, err := reservePorts([]listener{{Address: address, What: "the scheduler's Prometheus /metrics", Flag: "--metrics-address"}})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := net.Listen("tcp", address); err == nil {
		_ = l.Close()
		t.Fatalf("%s is not held", address)
	}
	release()
	l, err := net.Listen("tcp", address)
	if err != nil {
		t.Fatalf("%s is still held after release: %v", address, err)
	}
	_ = l.Close()
}

// The demo stops at once on a busy metrics port, before it starts anything or says that the
// cluster is up; it needs no control plane to find out.
func TestDemoFailsAtOnceOnABusyPort(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir()) // nothing to start: it must not get that far
	busy, port := occupy(t)
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	err := runDemo(ctx, demoOptions{MinRuntime: time.Second, BurstAfter: time.Second, Dir: t.TempDir(),
		MetricsAddress: busy, Out: &out, Clock: clock.RealClock{}})
	if err == nil {
		t.Fatal("the demo ran beside a busy metrics port")
	}
	expectAll(t, err.Error(), "port "+port+" is busy", "the scheduler's Prometheus /metrics", "--metrics-address")
	if out.Len() > 0 {
		t.Errorf("the demo printed before failing:\n%s", out.String())
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("failing took %v", took)
	}
}

// make run-local runs runlocal --check-ports with RUN_LOCAL_ARGS before its slow first build:
// a busy port chosen by a flag is named with that flag, the exit code is non-zero, and
// nothing is started (not even the demo's directory made).
func TestCheckPortsNamesABusyPortAndStartsNothing(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir()) // nothing to start: it must not get that far
	busy, port := occupy(t)
	dir := filepath.Join(t.TempDir(), "local")
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"--check-ports", "--dir", dir, "--health-address=" + busy}, &out, &errOut)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	expectAll(t, errOut.String(), "run-local: nothing was started",
		"port "+port+" is busy (another process listens on "+busy+"): the scheduler's /healthz and /readyz needs it",
		"choose another port with --health-address")
	// The default metrics port is checked too, but it is free here unless something else on
	// this machine holds it: only the busy port given by flag must be named.
	if out.Len() > 0 {
		t.Errorf("the check printed on stdout:\n%s", out.String())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the check made the demo's directory %s (%v): it started the demo", dir, err)
	}
}

// With every port free, --check-ports succeeds at once, starts nothing and gives the ports
// back for the run that follows it.
func TestCheckPortsSucceedsAndGivesThePortsBack(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	metrics, health := freeAddress(t), freeAddress(t)
	dir := filepath.Join(t.TempDir(), "local")
	var out, errOut bytes.Buffer
	start := time.Now()
	code := run(context.Background(), []string{"--check-ports", "--dir", dir, "--metrics-address", metrics, "--health-address", health}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, errOut.String())
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the check took %v", took)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the check made the demo's directory %s (%v): it started the demo", dir, err)
	}
	for _, address := range []string{metrics, health} {
		l, err := net.Listen("tcp", address)
		if err != nil {
			t.Fatalf("%s is still held after the check: %v", address, err)
		}
		_ = l.Close()
	}
}
