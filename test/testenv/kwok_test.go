package testenv_test

import (
	"context"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

var _ = Describe("KWOK", func() {
	// KWOK plays a node as the suites need it: Ready with what it was created with, a bound
	// pod runs with a start time, a deleted pod goes.
	It("plays nodes and pods", func() {
		kwok, err := env.StartKWOK(GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			Expect(kwok.Stop()).To(Succeed())
			Expect(kwok.Err()).To(Succeed(), "a kwok stopped on purpose is reported dead")
		})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		DeferCleanup(cancel)
		c := kubernetes.NewForConfigOrDie(env.Config)
		Expect(testenv.CreateNode(ctx, c, "gpu-node", 8)).To(Succeed())
		poll := func(what string, done func() (bool, error)) {
			GinkgoHelper()
			err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) { return done() })
			Expect(err).NotTo(HaveOccurred(), "%s (kwok's log: %s)", what, kwok.Log)
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
		_, err = c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		poll("bound pod running with a start time", func() (bool, error) {
			got, err := c.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
			return err == nil && got.Status.Phase == v1.PodRunning && got.Status.StartTime != nil, err
		})
		Expect(c.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{})).To(Succeed())
		poll("deleted pod gone, its grace period cut short", func() (bool, error) {
			_, err := c.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
			return err != nil, nil
		})
	})

	// A kwok that exits by itself is noticed: Err says so with the end of its log and where
	// the log is, and Stop does not hide it.
	It("tells why it exited", func() {
		_, stages, err := testenv.KWOKBinary()
		Expect(err).NotTo(HaveOccurred())
		broken := filepath.Join(GinkgoT().TempDir(), "kwok")
		script := "#!/bin/sh\necho 'kwok: cannot reach the API server' >&2\nexit 1\n"
		Expect(os.WriteFile(broken, []byte(script), 0o755)).To(Succeed())
		GinkgoT().Setenv("KWOK", broken)
		GinkgoT().Setenv("KWOK_STAGES", stages)
		kwok, err := env.StartKWOK(GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		DeferCleanup(cancel)
		err = wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
			return kwok.Err() != nil, nil
		})
		Expect(err).NotTo(HaveOccurred(), "kwok exited, yet Err still says nothing")
		Expect(kwok.Err()).To(MatchError(SatisfyAll(
			ContainSubstring("exit status 1"), ContainSubstring("cannot reach the API server"), ContainSubstring(kwok.Log))))
		Expect(kwok.Stop()).To(HaveOccurred(), "Stop returned nil for a kwok that had exited by itself")
	})
})
