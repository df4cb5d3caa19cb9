package gpuwebhook

import (
	"context"
	"encoding/json"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// WebhookPath is where Register serves the webhook: the path a MutatingWebhookConfiguration
// for the CREATE of pods points at.
const WebhookPath = "/mutate-v1-pod-gpu-sharing"

var podResource = metav1.GroupVersionResource{Group: "", Version: "v1", Resource: "pods"}

// Handler answers the API server's admission reviews of pods with Mutate.
type Handler struct {
	decoder admission.Decoder
	options Options
}

var _ admission.Handler = &Handler{}

// NewHandler is a Handler applying Mutate with opts, refused if the API server would refuse
// every pod it changes (a runtime class that is not a valid name).
func NewHandler(opts Options) (*Handler, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return &Handler{decoder: admission.NewDecoder(scheme), options: opts}, nil
}

// Register serves a Handler with opts at WebhookPath on server.
func Register(server webhook.Server, opts Options) error {
	handler, err := NewHandler(opts)
	if err != nil {
		return err
	}
	server.Register(WebhookPath, &admission.Webhook{Handler: handler})
	return nil
}

// Handle lets through, unchanged, anything but the creation of a pod (a pod's containers
// and share are fixed then), refuses a pod Mutate refuses with its message, and patches the
// pod Mutate changes.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create || req.Resource != podResource || req.SubResource != "" {
		return admission.Allowed("")
	}
	pod := &v1.Pod{}
	if err := h.decoder.Decode(req, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	mutated, err := Mutate(pod, h.options)
	if err != nil {
		return admission.Denied(err.Error())
	}
	if mutated == nil {
		return admission.Allowed("")
	}
	raw, err := json.Marshal(mutated)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	logf.FromContext(ctx).V(1).Info("Gave a GPU share pod its ConfigMaps",
		"configMapPrefix", mutated.Annotations[scheduling.SharedGPUConfigMapAnnotation])
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}
