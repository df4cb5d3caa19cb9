package scale

import (
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// The GPU-sharing counterparts of fill-while-submitting and reclaim, with the scheduler
// sharing GPUs on the node (a reservation pod per shared device, the shares' ConfigMaps),
// to set their time and API writes per pod against the whole-GPU ones.
//
// The mix: as many jobs as GPUs, as in the whole-GPU scenarios; half of them one pod of one
// whole GPU, half a gang of two pods of half a GPU each. So half the jobs (two thirds of the
// pods) are fractional, half the GPUs are shared, and the cluster is exactly filled: it
// fills only if the scheduler packs every two halves onto one device.

// mixPods is how many pods the mix has: G/2 whole, G shares.
func mixPods() int { return gpus()/2 + 2*(gpus()/2) }

// submitMix submits the mix to a queue, the whole and the shared jobs side by side, and
// returns when submission began and ended.
func (r *run) submitMix(queue, prefix string) (began, ended time.Time) {
	began = time.Now()
	var wg sync.WaitGroup
	for _, j := range []jobs{
		{queue: queue, prefix: prefix + "-whole", count: gpus() / 2, pods: 1, gpus: 1},
		{queue: queue, prefix: prefix + "-half", count: gpus() / 2, pods: 2, fraction: "0.5"},
	} {
		wg.Go(func() {
			defer GinkgoRecover()
			r.submit(j)
		})
	}
	wg.Wait()
	return began, time.Now()
}

// sharedDevices counts the reservation pods present: one per device the shares hold.
func sharedDevices() int {
	return cluster.observer.podCount(scheduling.ReservationNamespace, "", isPresent)
}

var _ = Describe("GPU sharing at scale", func() {
	It("fills the cluster while jobs, half of them GPU shares, are being submitted", func() {
		r := newRun("fill-shares")
		r.shareGPUs()
		r.createQueue("team", float64(gpus()), 0)
		r.startScheduler()
		r.waitLeading()
		began, submitted := r.submitMix("team", "job")
		running := r.waitRunning("team", mixPods())
		Expect(sharedDevices()).To(Equal(gpus()/2), "one reservation pod per shared device, two halves on each")
		r.result.Headline = "all running"
		r.result.Figures["all running"] = since(began, running)
		r.result.Figures["submission"] = since(began, submitted)
		r.finish()
	})

	It("reclaims every GPU, half of them shared, for jobs of the queue that deserves them", func() {
		r := newRun("reclaim-shares")
		r.shareGPUs()
		r.createQueue("borrower", 0, 0)
		r.createQueue("owner", float64(gpus()), 0)
		r.startScheduler()
		r.submitMix("borrower", "borrow")
		r.waitRunning("borrower", mixPods())
		began, submitted := r.submitMix("owner", "job")
		running := r.waitRunning("owner", mixPods())
		Expect(cluster.observer.podCount(r.namespace, r.name+"-borrower", isEvicted)).To(Equal(mixPods()), "every borrower evicted")
		r.result.Headline = "all running"
		r.result.Figures["all running"] = since(began, running)
		r.result.Figures["after submission"] = since(submitted, running)
		r.finish()
	})
})
