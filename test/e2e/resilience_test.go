package e2e

import (
	"context"
	"errors"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

var _ = Describe("Start stamps under API trouble", func() {
	It("survive write conflicts and a briefly unavailable API server", func() {
		createNamespace("flaky")
		create(builders.MakeQueue("flaky-queue").GPUQuota(-1).Obj())
		createNode("flaky-node", 2)

		// The first four writes to PodGroups fail: two as if the API server were down, two as
		// conflicts.
		var failures atomic.Int32
		group := schema.GroupResource{Group: "scheduling.run.ai", Resource: "podgroups"}
		flaky := func(obj client.Object) error {
			if _, ok := obj.(*v2alpha2.PodGroup); !ok {
				return nil
			}
			switch n := failures.Add(1); {
			case n <= 2:
				return apierrors.NewServiceUnavailable("injected: API server briefly unavailable")
			case n <= 4:
				return apierrors.NewConflict(group, obj.GetName(), nil)
			}
			return nil
		}
		opts := schedulerOptions("")
		opts.WrapClient = func(c client.Client) client.Client {
			return interceptor.NewClient(withoutWatch{c}, interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, o ...client.PatchOption) error {
					if err := flaky(obj); err != nil {
						return err
					}
					return c.Patch(ctx, obj, patch, o...)
				},
				SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, o ...client.SubResourcePatchOption) error {
					if err := flaky(obj); err != nil {
						return err
					}
					return c.SubResource(sub).Patch(ctx, obj, patch, o...)
				},
			})
		}
		DeferCleanup(startScheduler(opts))

		createJob(builders.MakePodGroup("flaky", "stubborn").Queue("flaky-queue").PriorityClass("train").MinMember(2), 2, 1)
		Eventually(runningPods("flaky", "stubborn")).Should(Equal(2))
		// The stamp is the moment the job was bound, however many writes it took to land.
		startStamp(k8sClient, "flaky", "stubborn")
		Expect(failures.Load()).To(BeNumerically(">", 4), "the injected failures happened before the stamp landed")
	})
})

// withoutWatch lets the interceptor wrap the manager's client, which has no Watch; the status
// updater never watches.
type withoutWatch struct{ client.Client }

func (withoutWatch) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("watch is not supported here")
}
