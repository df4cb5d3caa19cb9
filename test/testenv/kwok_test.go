package testenv_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

// KWOK plays a node as the suites need it: Ready with what it was created with, a bound pod
// runs with a start time, a deleted pod goes.
func TestKWOKPlaysNodesAndPods(t *testing.T) {
	env := startEnvironment(t)
	kwok, err := env.StartKWOK(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := kwok.Stop(); err != nil {
			t.Error(err)
		}
		if err := kwok.Err(); err != nil {
			t.Errorf("a kwok stopped on purpose is reported dead: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := kubernetes.NewForConfigOrDie(env.Config)
	if err := testenv.CreateNode(ctx, c, "gpu-node", 8); err != nil {
		t.Fatal(err)
	}
	poll := func(what string, done func() (bool, error)) {
		t.Helper()
		if err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) { return done() }); err != nil {
			t.Fatalf("%s: %v (kwok's log: %s)", what, err, kwok.Log)
		}
	}
	poll("node Ready with its GPUs", func() (bool, error) {
		node, err := c.CoreV1().Nodes().Get(ctx, "gpu-node", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		gpus := node.Status.Allocatable["nvidia.com/gpu"]
		for _, cond := range node.Status.Conditions {
			if cond.Type == v1.NodeReady && cond.Status == v1.ConditionTrue {
				return gpus.Value() == 8 && len(node.Spec.Taints) == 0, nil
			}
		}
		return false, nil
	})

	// Bound by hand, for no scheduler: kwok runs whatever is bound to its nodes.
	pod := builders.MakePod("default", "p").SchedulerName("").Node("gpu-node").Obj()
	if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll("bound pod running with a start time", func() (bool, error) {
		got, err := c.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
		return err == nil && got.Status.Phase == v1.PodRunning && got.Status.StartTime != nil, err
	})
	if err := c.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll("deleted pod gone, its grace period cut short", func() (bool, error) {
		_, err := c.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
		return err != nil, nil
	})
}

// A kwok that exits by itself is noticed: Err says so with the end of its log and where the
// log is, and Stop does not hide it.
func TestKWOKErrTellsWhyItExited(t *testing.T) {
	env := startEnvironment(t)
	_, stages, err := testenv.KWOKBinary()
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "kwok")
	script := "#!/bin/sh\necho 'kwok: cannot reach the API server' >&2\nexit 1\n"
	if err := os.WriteFile(broken, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KWOK", broken)
	t.Setenv("KWOK_STAGES", stages)
	kwok, err := env.StartKWOK(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		return kwok.Err() != nil, nil
	}); err != nil {
		t.Fatalf("kwok exited, yet Err still says nothing: %v", err)
	}
	for _, want := range []string{"exit status 1", "cannot reach the API server", kwok.Log} {
		if !strings.Contains(kwok.Err().Error(), want) {
			t.Errorf("Err() = %q, want it to contain %q", kwok.Err(), want)
		}
	}
	if err := kwok.Stop(); err == nil {
		t.Error("Stop returned nil for a kwok that had exited by itself")
	}
}

// startEnvironment starts a control plane for one test, or skips the test without one.
func startEnvironment(t *testing.T) *testenv.Environment {
	t.Helper()
	env, err := testenv.Start()
	if err != nil {
		t.Skip(err) // needs KUBEBUILDER_ASSETS (make test builds the control plane)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return env
}
