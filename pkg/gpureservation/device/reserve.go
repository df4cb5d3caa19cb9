package device

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// Environment variables through which the downward API tells the pod its own name.
const (
	PodNameEnv      = "POD_NAME"
	PodNamespaceEnv = "POD_NAMESPACE"
)

// Pod names the reservation pod this program runs in.
type Pod struct {
	Namespace, Name string
}

func (p Pod) String() string { return p.Namespace + "/" + p.Name }

// PodFromEnv reads the pod's name and namespace from the environment (os.Getenv, or a map's
// lookup in tests). An error names every variable that is missing.
func PodFromEnv(getenv func(string) string) (Pod, error) {
	pod := Pod{Namespace: getenv(PodNamespaceEnv), Name: getenv(PodNameEnv)}
	var missing []string
	if pod.Name == "" {
		missing = append(missing, PodNameEnv)
	}
	if pod.Namespace == "" {
		missing = append(missing, PodNamespaceEnv)
	}
	if len(missing) > 0 {
		return Pod{}, fmt.Errorf("environment variable %s not set: the pod's spec must set it from the downward API "+
			"(metadata.name, metadata.namespace)", strings.Join(missing, " and "))
	}
	return pod, nil
}

// Reserve finds the container's GPU, then connects to the cluster, announces the GPU on the
// pod and holds it until ctx is done (the pod is terminated); it returns nil then. The
// device comes first so that a node without a usable GPU reports that, whatever the
// cluster's state. connect is called at most once, and only after the device is found.
func Reserve(ctx context.Context, pod Pod, n NVML, connect func() (corev1client.PodsGetter, error), log logr.Logger) error {
	uuid, err := FindDevice(n)
	if err != nil {
		return err
	}
	log.Info("Found the GPU the device plugin gave this pod", "uuid", uuid)

	pods, err := connect()
	if err != nil {
		return fmt.Errorf("connecting to the cluster to announce GPU %s: %w", uuid, err)
	}
	if err := Announce(ctx, pods, pod, uuid); err != nil {
		return err
	}
	log.Info("Reserved the GPU: annotated the pod; holding it until terminated",
		"pod", pod.String(), "annotation", scheduling.ReservedGPUAnnotation, "uuid", uuid)

	<-ctx.Done()
	log.Info("Terminated: releasing the GPU", "uuid", uuid)
	return nil
}
