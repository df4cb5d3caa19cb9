package gpuwebhook

import (
	"context"
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kai-minruntime/kai-scheduler/pkg/gpuwebhook"
)

var (
	// env is the one control plane the suite's specs share, with the webhook installed.
	env       *envtest.Environment
	k8sClient client.Client
	ctx       context.Context
	stop      context.CancelFunc
)

func TestGPUWebhook(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "GPU-sharing admission webhook against a real API server")
}

// sharingWebhook is the configuration the chart is to install: the CREATE of pods goes to
// gpuwebhook.WebhookPath, and a pod is not created while the webhook cannot answer (a share
// pod created unprepared would run without its device). envtest points the service at the
// local server.
func sharingWebhook() *admissionregistrationv1.MutatingWebhookConfiguration {
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "kai-gpu-sharing"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "gpu-sharing.kai.scheduler",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
				Namespace: "kai-scheduler", Name: "kai-webhooks", Path: ptr.To(gpuwebhook.WebhookPath)}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
			}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

var _ = BeforeSuite(func() {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		Skip("KUBEBUILDER_ASSETS is not set: run the suite with `make test`, " +
			"or export KUBEBUILDER_ASSETS=$(hack/build-control-plane.sh)")
	}
	env = &envtest.Environment{
		BinaryAssetsDirectory: assets,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			MutatingWebhooks: []*admissionregistrationv1.MutatingWebhookConfiguration{sharingWebhook()},
		},
	}
	cfg, err := env.Start()
	Expect(err).NotTo(HaveOccurred())

	installed := env.WebhookInstallOptions
	server := webhook.NewServer(webhook.Options{
		Host: installed.LocalServingHost, Port: installed.LocalServingPort, CertDir: installed.LocalServingCertDir,
	})
	Expect(gpuwebhook.Register(server, gpuwebhook.Options{})).To(Succeed())
	ctx, stop = context.WithCancel(context.Background())
	go func() {
		defer GinkgoRecover()
		Expect(server.Start(ctx)).To(Succeed())
	}()
	Eventually(func() error { return server.StartedChecker()(nil) }).Should(Succeed())

	k8sClient, err = client.New(cfg, client.Options{})
	Expect(err).NotTo(HaveOccurred())
	// As NVIDIA's GPU operator installs it: the API server refuses a pod naming a runtime
	// class that does not exist.
	Expect(k8sClient.Create(ctx, &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: gpuwebhook.DefaultRuntimeClassName}, Handler: "nvidia"})).To(Succeed())
})

var _ = AfterSuite(func() {
	if stop != nil {
		stop()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
