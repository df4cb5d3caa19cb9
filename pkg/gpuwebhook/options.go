package gpuwebhook

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
)

// DefaultRuntimeClassName is the runtime class a share pod without one gets: the one NVIDIA's
// GPU operator installs, whose runtime hook gives the container the device it is to share.
const DefaultRuntimeClassName = "nvidia"

// randomPartLength is how many random characters make a share pod's ConfigMaps' names unique
// among the pods of one owner.
const randomPartLength = 7

// Options configure the webhook; the zero value is upstream's behaviour.
type Options struct {
	// RuntimeClassName is given to a share pod that names no runtime class; empty means
	// DefaultRuntimeClassName.
	RuntimeClassName string
	// RandomPart makes the random part of a pod's ConfigMaps' names: lower-case letters and
	// digits. Nil means 7 characters of k8s.io/apimachinery's rand.String; tests fix it.
	RandomPart func() string
	// SchedulerName, when set, limits the webhook to the pods of that scheduler: only its
	// binder writes the ConfigMaps a prepared pod needs to start, so another scheduler's
	// share pod prepared here would wait for them forever.
	SchedulerName string
}

// withDefaults fills what o leaves empty.
func (o Options) withDefaults() Options {
	if o.RuntimeClassName == "" {
		o.RuntimeClassName = DefaultRuntimeClassName
	}
	if o.RandomPart == nil {
		o.RandomPart = func() string { return rand.String(randomPartLength) }
	}
	return o
}

// validate refuses a runtime class the API server would refuse on every share pod, so that
// a misconfiguration stops the webhook from starting instead of failing users' pods.
func (o Options) validate() error {
	if o.RuntimeClassName == "" {
		return nil
	}
	if problems := validation.IsDNS1123Subdomain(o.RuntimeClassName); len(problems) > 0 {
		return fmt.Errorf("GPU-sharing runtime class %q: %s", o.RuntimeClassName, strings.Join(problems, "; "))
	}
	return nil
}
