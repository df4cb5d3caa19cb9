package scale

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpuwebhook"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// GPU sharing on the node at scale: the scheduler's binder makes a reservation pod per
// shared device and waits for the device's UUID on it before binding a share. On a real node
// the reservation pod's program writes that UUID; here the suite plays it (KWOK runs no
// program), for every reservation pod, as soon as it exists.

// sharingArgs turn GPU sharing on for a scenario's scheduler. The webhook is not served (it
// would need a certificate and the API server to call it): the suite prepares share pods as
// it would (asked). The image is never pulled: KWOK runs nothing.
var sharingArgs = []string{"--gpu-sharing", "--resource-reservation-image=example.com/kai-resource-reservation:scale", "--webhook-port=0"}

// reservationWorkers annotate reservation pods in parallel: a bind waits for its device's
// UUID, so the suite's stand-in for the node must never be what the scheduler waits on.
const reservationWorkers = 32

// shareGPUs runs the scenario's scheduler with GPU sharing on; before startScheduler. Only
// the scenarios that submit shares do, so that the whole-GPU scenarios measure the chart's
// default setting.
func (r *run) shareGPUs() {
	if !settings.sharing {
		Skip(settings.binary + " has no --gpu-sharing")
	}
	r.args = append(r.args, sharingArgs...)
	cluster.observer.setSharing(true)
}

// asked is the pod of a job as the jobs ask: whole GPUs, or a share of one device prepared
// as the admission webhook prepares it (ConfigMap prefix, environment, volume, runtime
// class), which the binder then writes the ConfigMaps of.
func asked(pod *builders.PodWrapper, j jobs) (*v1.Pod, error) {
	if j.fraction == "" {
		return pod.GPUs(j.gpus).Obj(), nil
	}
	pod.Annotation(scheduling.GPUFractionAnnotation, j.fraction)
	prepared, err := gpuwebhook.Mutate(pod.Obj(), gpuwebhook.Options{})
	if err != nil || prepared == nil {
		return nil, fmt.Errorf("preparing share pod %s as the webhook would: %w", pod.Name, err)
	}
	return prepared, nil
}

// readyForReservations makes what the chart installs for reservation pods (their namespace,
// service account and runtime class, without which the API server refuses them) and starts
// playing their program until ctx ends.
func readyForReservations(ctx context.Context, c client.Client, cs kubernetes.Interface) error {
	for _, obj := range []client.Object{
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: scheduling.ReservationNamespace}},
		&v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: scheduling.ReservationNamespace, Name: "kai-resource-reservation"}},
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: gpuwebhook.DefaultRuntimeClassName}, Handler: "nvidia"},
	} {
		if err := client.IgnoreAlreadyExists(c.Create(ctx, obj)); err != nil {
			return err
		}
	}
	return playReservations(ctx, cs)
}

// reservation names one reservation pod; the UID keeps a patch from landing on a pod made
// anew under the same name.
type reservation struct {
	name string
	uid  types.UID
}

// playReservations writes, on every reservation pod that lacks it, the UUID of "its device"
// ("GPU-" and the pod's UID: one per pod, as the device plugin gives each its own), as the
// program does once its container runs. It watches the namespace rather than listing it, and
// patches from reservationWorkers goroutines.
func playReservations(ctx context.Context, cs kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(scheduling.ReservationNamespace))
	informer := factory.Core().V1().Pods().Informer()
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reservation]())
	enqueue := func(obj any) {
		pod, ok := obj.(*v1.Pod)
		if ok && pod.Annotations[scheduling.ReservedGPUAnnotation] == "" && pod.DeletionTimestamp == nil {
			queue.Add(reservation{name: pod.Name, uid: pod.UID})
		}
	}
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	for _, synced := range factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return fmt.Errorf("the reservation pods' informer did not sync")
		}
	}
	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	for range reservationWorkers {
		go func() {
			for {
				key, shutdown := queue.Get()
				if shutdown {
					return
				}
				if err := annotateDevice(ctx, cs, key); err != nil && ctx.Err() == nil {
					queue.AddRateLimited(key)
				} else {
					queue.Forget(key)
				}
				queue.Done(key)
			}
		}()
	}
	return nil
}

// annotateDevice writes the device's UUID on one reservation pod. The UID in the patch is a
// precondition: a pod deleted since, or made anew, is not this one.
func annotateDevice(ctx context.Context, cs kubernetes.Interface, r reservation) error {
	patch := fmt.Appendf(nil, `{"metadata":{"uid":%q,"annotations":{%q:%q}}}`, r.uid, scheduling.ReservedGPUAnnotation, "GPU-"+string(r.uid))
	_, err := cs.CoreV1().Pods(scheduling.ReservationNamespace).Patch(ctx, r.name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// removeReservations deletes the reservation pods a scenario left (those its last shares
// held when the scheduler stopped, whose collector is gone with it) and waits until they
// are, so that the next scenario starts with every device free.
func removeReservations() {
	o := cluster.observer
	Expect(cluster.client.DeleteAllOf(cluster.ctx, &v1.Pod{}, client.InNamespace(scheduling.ReservationNamespace),
		client.GracePeriodSeconds(0))).To(Succeed())
	Eventually(func() int { return o.podCount(scheduling.ReservationNamespace, "", isPresent) }).WithTimeout(timeout()).
		WithPolling(250*time.Millisecond).Should(BeZero(), "the reservation pods are gone")
	o.forget(scheduling.ReservationNamespace)
}
