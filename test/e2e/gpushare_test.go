package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// The GPU memory label of the suite's share nodes, in MiB: an A100's 40 GiB, as GPU feature
// discovery writes it.
const deviceMiB = "40960"

var _ = Describe("GPU sharing", func() {
	// Upstream KAI's e2e: twice as many 0.7 shares as single-GPU nodes. No two fit one
	// device, so each node's device takes one and the rest wait.
	It("places one 0.7 share per device and tells the others why they wait", func() {
		const nodes = 3
		createNamespace("fraction")
		create(builders.MakeQueue("fraction-queue").GPUQuota(-1).Obj())
		for i := range nodes {
			createShareNode(fmt.Sprintf("fraction-node-%d", i), 1)
		}
		DeferCleanup(startScheduler(schedulerOptions("")))
		jobs := make([]string, 2*nodes)
		for i := range jobs {
			jobs[i] = fmt.Sprintf("frac-%d", i)
			createJob(builders.MakePodGroup("fraction", jobs[i]).Queue("fraction-queue"), 1, 0, asShare(scheduling.GPUFractionAnnotation, "0.7"))
		}

		boundOf := func() int {
			n := 0
			for _, job := range jobs {
				n += boundPods("fraction", job)()
			}
			return n
		}
		Eventually(boundOf).Should(Equal(nodes))
		Consistently(boundOf, 2*time.Second).Should(Equal(nodes), "no device holds two 0.7 shares")
		nodesUsed, groups := map[string]bool{}, map[string]bool{}
		var waiting []string
		for _, job := range jobs {
			pod := getPod("fraction", job+"-0")
			if pod.Spec.NodeName == "" {
				waiting = append(waiting, job)
				Expect(model.GPUGroupsOf(pod)).To(BeEmpty(), "a pod that waits has no device")
				continue
			}
			Expect(model.GPUGroupsOf(pod)).To(HaveLen(1), "pod %s has a share of one device, named by a %s label", pod.Name, scheduling.GPUGroupLabel)
			Expect(pod.Labels).To(HaveKey(scheduling.GPUGroupLabel))
			nodesUsed[pod.Spec.NodeName] = true
			groups[pod.Labels[scheduling.GPUGroupLabel]] = true
		}
		Expect(nodesUsed).To(HaveLen(nodes), "one share on each node")
		Expect(groups).To(HaveLen(nodes), "each node's device is a GPU group of its own")
		for _, job := range waiting {
			Eventually(pendingMessage("fraction", job)).Should(ContainSubstring(
				"%d node(s) had no GPU device with room for the share", nodes), "job %s says why it waits", job)
		}
	})

	It("puts two halves on one device and charges the queue half a GPU each", func() {
		createNamespace("halves")
		create(builders.MakeQueue("halves-queue").GPUQuota(-1).Obj())
		createShareNode("halves-a", 2)
		createShareNode("halves-b", 2)
		DeferCleanup(startScheduler(schedulerOptions("")))

		createJob(builders.MakePodGroup("halves", "half-a").Queue("halves-queue"), 1, 0, asShare(scheduling.GPUFractionAnnotation, "0.5"))
		createJob(builders.MakePodGroup("halves", "half-b").Queue("halves-queue"), 1, 0, asShare(scheduling.GPUFractionAnnotation, "0.5"))
		Eventually(runningPods("halves", "half-a")).Should(Equal(1))
		Eventually(runningPods("halves", "half-b")).Should(Equal(1))
		a, b := getPod("halves", "half-a-0"), getPod("halves", "half-b-0")
		Expect(b.Spec.NodeName).To(Equal(a.Spec.NodeName), "the second half packs beside the first")
		Expect(model.GPUGroupsOf(a)).To(HaveLen(1))
		Expect(model.GPUGroupsOf(b)).To(Equal(model.GPUGroupsOf(a)), "both halves are on one device")
		Eventually(queueAllocatedGPUs("halves-queue"), 30*time.Second).Should(Equal("1"), "two halves make one GPU")

		// That device is full: a third half takes another device, a group of its own.
		createJob(builders.MakePodGroup("halves", "half-c").Queue("halves-queue"), 1, 0, asShare(scheduling.GPUFractionAnnotation, "0.5"))
		Eventually(runningPods("halves", "half-c")).Should(Equal(1))
		c := getPod("halves", "half-c-0")
		Expect(model.GPUGroupsOf(c)).To(HaveLen(1))
		Expect(model.GPUGroupsOf(c)).NotTo(Equal(model.GPUGroupsOf(a)))
		Eventually(queueAllocatedGPUs("halves-queue"), 30*time.Second).Should(Equal("1500m"))
	})

	// Each refused request waits beside a share asked in memory, which binds: the scheduler
	// ran, and refused only what it should.
	It("refuses a share upstream KAI refuses, with a warning naming the annotation", func() {
		createNamespace("refused")
		create(builders.MakeQueue("refused-queue").GPUQuota(-1).Obj())
		createShareNode("refused-node", 2)
		DeferCleanup(startScheduler(schedulerOptions("")))
		shareJob := func(name string, gpus int64, edit func(*builders.PodWrapper)) {
			createJob(builders.MakePodGroup("refused", name).Queue("refused-queue"), 1, gpus, edit)
		}
		shareJob("by-memory", 0, asShare(scheduling.GPUMemoryAnnotation, "20480"))
		refused := []struct {
			job        string
			gpus       int64
			edit       func(*builders.PodWrapper)
			annotation string // the annotation the warning names
		}{
			{"over-one", 0, asShare(scheduling.GPUFractionAnnotation, "1.5"), scheduling.GPUFractionAnnotation},
			{"beside-whole", 1, func(p *builders.PodWrapper) { p.Annotation(scheduling.GPUFractionAnnotation, "0.5") }, scheduling.GPUFractionAnnotation},
			{"too-much-memory", 0, asShare(scheduling.GPUMemoryAnnotation, "81920"), scheduling.GPUMemoryAnnotation},
			{"devices-alone", 0, asShare(scheduling.GPUFractionNumDevicesAnnotation, "2"), scheduling.GPUFractionNumDevicesAnnotation},
		}
		for _, r := range refused {
			shareJob(r.job, r.gpus, r.edit)
		}

		Eventually(runningPods("refused", "by-memory")).Should(Equal(1))
		Expect(model.GPUGroupsOf(getPod("refused", "by-memory-0"))).To(HaveLen(1))
		// Upstream's rounding: the label floored to 40900 MiB, the share rounded up to the hundredth.
		Eventually(queueAllocatedGPUs("refused-queue"), 30*time.Second).Should(Equal("510m"), "20480 MiB of a 40960 MiB device")
		for _, r := range refused {
			pod := r.job + "-0"
			Eventually(func() []string { return podWarnings("refused", pod, model.ReasonInvalidGPUShare) }).Should(
				ContainElement(ContainSubstring("annotation %s", r.annotation)), "pod %s is told what is wrong with its request", pod)
			Eventually(pendingMessage("refused", r.job)).Should(ContainSubstring(r.annotation), "job %s says why it waits", r.job)
		}
		Consistently(func() int {
			n := 0
			for _, r := range refused {
				n += boundPods("refused", r.job)()
			}
			return n
		}, 2*time.Second).Should(BeZero(), "a refused request lands nowhere, though the node has room")
	})

	// Two borrowed halves fill the only device; the owner's half waits until one of them has
	// run its reclaim min-runtime, then takes its place on that device. The finalizer holds
	// the victim while it terminates, so that its DisruptionTarget condition and the owner's
	// promise can be read.
	It("reclaims one share when its min-runtime ends, and gives its place on the device to the owner", func() {
		const protection = 4 * time.Second
		createNamespace("share-reclaim")
		create(builders.MakeQueue("share-owner").GPUQuota(1).Obj())
		create(builders.MakeQueue("share-borrower").GPUQuota(0).ReclaimMinRuntime(protection).Obj())
		createShareNode("share-reclaim-node", 1)
		DeferCleanup(startScheduler(schedulerOptions("")))

		borrowed := []string{"borrowed-a", "borrowed-b"}
		for _, job := range borrowed {
			createJob(builders.MakePodGroup("share-reclaim", job).Queue("share-borrower").PriorityClass("train"), 1, 0,
				asShare(scheduling.GPUFractionAnnotation, "0.5"),
				func(p *builders.PodWrapper) { p.Finalizer("e2e.kai.scheduler/hold") })
		}
		DeferCleanup(func() { // runs first: lets the cleanup delete them
			for _, job := range borrowed {
				_ = releaseFinalizers("share-reclaim", job+"-0")
			}
		})
		protectedUntil := map[string]time.Time{}
		for _, job := range borrowed {
			Eventually(runningPods("share-reclaim", job)).Should(Equal(1))
			protectedUntil[job] = startStamp(k8sClient, "share-reclaim", job).Add(protection)
		}
		device := getPod("share-reclaim", "borrowed-a-0").Labels[scheduling.GPUGroupLabel]
		Expect(device).NotTo(BeEmpty())
		Expect(getPod("share-reclaim", "borrowed-b-0").Labels[scheduling.GPUGroupLabel]).To(Equal(device), "the node has one device")

		createJob(builders.MakePodGroup("share-reclaim", "owned").Queue("share-owner").PriorityClass("train"), 1, 0,
			asShare(scheduling.GPUFractionAnnotation, "0.5"))
		evicting := func() []string {
			var jobs []string
			for _, job := range borrowed {
				if getPod("share-reclaim", job+"-0").DeletionTimestamp != nil {
					jobs = append(jobs, job)
				}
			}
			return jobs
		}
		earliest := protectedUntil["borrowed-a"]
		if protectedUntil["borrowed-b"].Before(earliest) {
			earliest = protectedUntil["borrowed-b"]
		}
		Consistently(evicting, time.Until(earliest)-500*time.Millisecond).Should(BeEmpty(), "both halves are protected")
		Eventually(evicting).Should(HaveLen(1), "one half is reclaimed: the owner asks for half a device")
		Consistently(evicting, 2*time.Second).Should(HaveLen(1), "and only one")
		victim := evicting()[0]
		expectEvictedAtOrAfter("share-reclaim", victim, protectedUntil[victim].Truncate(time.Second))
		Expect(getPod("share-reclaim", victim+"-0").Status.Conditions).To(ContainElement(And(
			HaveField("Type", v1.DisruptionTarget), HaveField("Status", v1.ConditionTrue))))
		Eventually(func() []string { return eventReasons("share-reclaim", victim) }).Should(ContainElement("Reclaimed"))

		// The owner is promised the victim's place: its node, and the device by its label.
		Eventually(func() string { return getPod("share-reclaim", "owned-0").Status.NominatedNodeName }).Should(Equal("share-reclaim-node"))
		Expect(getPod("share-reclaim", "owned-0").Labels).To(HaveKeyWithValue(scheduling.GPUGroupLabel, device))
		Expect(boundPods("share-reclaim", "owned")()).To(BeZero(), "the victim still holds its half")
		Expect(releaseFinalizers("share-reclaim", victim+"-0")).To(Succeed())
		Eventually(runningPods("share-reclaim", "owned")).Should(Equal(1))
		owned := getPod("share-reclaim", "owned-0")
		Expect(owned.Spec.NodeName).To(Equal("share-reclaim-node"))
		Expect(model.GPUGroupsOf(owned)).To(Equal([]string{device}), "the owner's half is on the device the victim left")
		survivor := borrowed[0]
		if survivor == victim {
			survivor = borrowed[1]
		}
		Expect(runningPods("share-reclaim", survivor)()).To(Equal(1), "the other half still runs")
	})
})

// createShareNode creates a node as the suite does, with gpus devices of deviceMiB each (the
// nvidia.com/gpu.memory label GPU feature discovery writes).
func createShareNode(name string, gpus int64) {
	createNode(name, gpus)
	editNode(name, func(n *v1.Node) { metav1.SetMetaDataLabel(&n.ObjectMeta, scheduling.GPUMemoryLabel, deviceMiB) }, nil)
}

// asShare makes a pod of createJob(..., 0, ...) ask for part of a GPU as upstream's manifests
// do: annotations (key, value, key, value...) and no nvidia.com/gpu at all.
func asShare(annotations ...string) func(*builders.PodWrapper) {
	return func(p *builders.PodWrapper) {
		for i := 0; i+1 < len(annotations); i += 2 {
			p.Annotation(annotations[i], annotations[i+1])
		}
		r := &p.Spec.Containers[0].Resources
		delete(r.Requests, model.GPUResourceName)
		delete(r.Limits, model.GPUResourceName)
	}
}

// queueAllocatedGPUs reads the GPUs a Queue's status says its jobs hold ("500m": half a GPU).
func queueAllocatedGPUs(name string) func() string {
	return func() string {
		q := &v2.Queue{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Name: name}, q)).To(Succeed())
		gpus := q.Status.Allocated[model.GPUResourceName]
		return gpus.String()
	}
}

// podWarnings lists the messages of a pod's Warning events with the given reason.
func podWarnings(namespace, pod, reason string) []string {
	events := &v1.EventList{}
	Expect(k8sClient.List(suiteCtx, events, client.InNamespace(namespace))).To(Succeed())
	var messages []string
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == "Pod" && e.InvolvedObject.Name == pod && e.Type == v1.EventTypeWarning && e.Reason == reason {
			messages = append(messages, e.Message)
		}
	}
	return messages
}
