package gpureservation

import (
	"context"
	"sync/atomic"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

var (
	env *testenv.Environment
	c   client.Client
	ctx context.Context
	// devicesReported says whether the test, playing the reservation program, writes each
	// reservation pod's device UUID: off, a reservation never reports one.
	devicesReported atomic.Bool
)

func TestGPUReservation(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "GPU sharing on the node, the binder's side, against a real API server")
}

var _ = BeforeSuite(func() {
	var err error
	env, err = testenv.Start()
	if err != nil {
		Skip(err.Error()) // needs KUBEBUILDER_ASSETS (make test builds the control plane)
	}
	c = env.Client
	var cancel context.CancelFunc
	ctx, cancel = context.WithCancel(context.Background())
	DeferCleanup(func() { cancel(); Expect(env.Stop()).To(Succeed()) })
	clientset := kubernetes.NewForConfigOrDie(env.Config)
	for _, name := range []string{"node-a", "node-b"} {
		Expect(testenv.CreateNode(ctx, clientset, name, 8)).To(Succeed())
	}
	for _, ns := range []string{scheduling.ReservationNamespace, "team"} {
		Expect(c.Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	// The API server admits no pod of a runtime class it does not know; NVIDIA's operator
	// installs this one.
	Expect(c.Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "nvidia"}, Handler: "nvidia"})).To(Succeed())
	devicesReported.Store(true)
	// The test plays the reservation program: "its device" is GPU-<its group>, so that the
	// specs can tell which device each share was given.
	go testenv.PlayReservationProgram(ctx, c, func(p *v1.Pod) string { return "GPU-" + p.Labels[scheduling.GPUGroupLabel] }, devicesReported.Load)
})
