package main

import (
	"context"
	"io"
	"os"
	"strings"
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
	go func() {
		done <- runDemo(ctx, demoOptions{MinRuntime: 6 * time.Second, BurstAfter: time.Second, Dir: t.TempDir(), Out: io.Discard, Events: events})
	}()
	waitFor(t, events, "production submits serve")
	burstAt := time.Now()
	toldWhy := false
	var evictedAt time.Time
	for evictedAt.IsZero() {
		line := waitFor(t, events, "")
		if strings.Contains(line, "protected by min-runtime") {
			toldWhy = true
		}
		if strings.Contains(line, "pod research/pretrain-0 evicted") {
			evictedAt = time.Now()
		}
	}
	waitFor(t, events, "pod production/serve-0 running")
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

// waitFor returns the first line containing text, or fails after a minute.
func waitFor(t *testing.T, events <-chan string, text string) string {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case line := <-events:
			if strings.Contains(line, text) {
				return line
			}
		case <-deadline:
			t.Fatalf("no %q within a minute", text)
		}
	}
}
