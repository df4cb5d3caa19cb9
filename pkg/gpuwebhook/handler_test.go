package gpuwebhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"

	jsonpatch "github.com/evanphx/json-patch/v5"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpuwebhook"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// review is the API server's admission request for an operation on pod.
func review(operation admissionv1.Operation, pod *v1.Pod) admissionv1.AdmissionRequest {
	GinkgoHelper()
	raw, err := json.Marshal(pod)
	Expect(err).NotTo(HaveOccurred())
	return admissionv1.AdmissionRequest{
		UID:       "review-1",
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
		Namespace: pod.Namespace, Name: pod.Name,
		Operation: operation,
		Object:    runtime.RawExtension{Raw: raw},
	}
}

// applyPatch is the pod the API server stores: request's pod with the JSON patch applied.
func applyPatch(request admissionv1.AdmissionRequest, patch []byte) *v1.Pod {
	GinkgoHelper()
	decoded, err := jsonpatch.DecodePatch(patch)
	Expect(err).NotTo(HaveOccurred())
	raw, err := decoded.Apply(request.Object.Raw)
	Expect(err).NotTo(HaveOccurred())
	pod := &v1.Pod{}
	Expect(json.Unmarshal(raw, pod)).To(Succeed())
	return pod
}

var _ = Describe("The admission handler", func() {
	var handler *gpuwebhook.Handler
	BeforeEach(func() {
		var err error
		handler, err = gpuwebhook.NewHandler(options)
		Expect(err).NotTo(HaveOccurred())
	})
	handle := func(operation admissionv1.Operation, pod *v1.Pod) (admissionv1.AdmissionRequest, admission.Response) {
		request := review(operation, pod)
		return request, handler.Handle(context.Background(), admission.Request{AdmissionRequest: request})
	}

	It("patches a share pod at its creation into what Mutate makes of it", func() {
		pod := halfGPUPod().Obj()
		request, response := handle(admissionv1.Create, pod)

		Expect(response.Allowed).To(BeTrue())
		patch, err := json.Marshal(response.Patches)
		Expect(err).NotTo(HaveOccurred())
		Expect(applyPatch(request, patch)).To(Equal(mustMutate(pod, options)))
	})

	It("refuses a malformed share with a 403 naming the annotation", func() {
		_, response := handle(admissionv1.Create, halfGPUPod().Annotation(scheduling.GPUFractionAnnotation, "2").Obj())
		Expect(response.Allowed).To(BeFalse())
		Expect(response.Result.Code).To(BeEquivalentTo(http.StatusForbidden))
		Expect(response.Result.Message).To(HavePrefix(`annotation gpu-fraction="2"`))
	})

	DescribeTable("lets through, unchanged,",
		func(operation admissionv1.Operation, pod *v1.Pod) {
			_, response := handle(operation, pod)
			Expect(response.Allowed).To(BeTrue())
			Expect(response.Patches).To(BeEmpty())
		},
		Entry("a pod without share annotations", admissionv1.Create, builders.MakePod("ns", "plain").Obj()),
		Entry("a pod already given its ConfigMaps", admissionv1.Create,
			halfGPUPod().Annotation(scheduling.SharedGPUConfigMapAnnotation, "train-0-xxxxxxx-shared-gpu").Obj()),
		Entry("an update, even of a malformed share", admissionv1.Update, halfGPUPod().Annotation(scheduling.GPUFractionAnnotation, "2").Obj()),
	)

	It("is not made with a runtime class the API server would refuse on every share pod", func() {
		_, err := gpuwebhook.NewHandler(gpuwebhook.Options{RuntimeClassName: "NVIDIA runtime"})
		Expect(err).To(MatchError(ContainSubstring(`runtime class "NVIDIA runtime"`)))
	})
})

var _ = Describe("Register", func() {
	It("serves the handler at WebhookPath on a webhook server", func() {
		server := webhook.NewServer(webhook.Options{})
		Expect(gpuwebhook.Register(server, options)).To(Succeed())
		served := httptest.NewServer(server.(*webhook.DefaultServer).WebhookMux())
		DeferCleanup(served.Close)
		pod := halfGPUPod().Obj()
		request := review(admissionv1.Create, pod)
		body, err := json.Marshal(admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request:  &request,
		})
		Expect(err).NotTo(HaveOccurred())

		reply, err := served.Client().Post(served.URL+gpuwebhook.WebhookPath, "application/json", bytes.NewReader(body))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(reply.Body.Close)
		answered := admissionv1.AdmissionReview{}
		Expect(json.NewDecoder(reply.Body).Decode(&answered)).To(Succeed())

		Expect(answered.Response.UID).To(Equal(request.UID))
		Expect(answered.Response.Allowed).To(BeTrue())
		Expect(applyPatch(request, answered.Response.Patch)).To(Equal(mustMutate(pod, options)))
	})
})
