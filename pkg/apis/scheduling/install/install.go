package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/kai/v1alpha1"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

var schemeBuilder = runtime.NewSchemeBuilder(v2.AddToScheme, v2alpha2.AddToScheme, v1alpha1.AddToScheme)

// AddToScheme adds Queue (v2), PodGroup (v2alpha2) and Topology (kai.scheduler/v1alpha1) to a
// scheme.
var AddToScheme = schemeBuilder.AddToScheme

// Scheme is a new scheme of the built-in Kubernetes types and the scheduling.run.ai API: what
// the scheduler, its tools and their tests read.
func Scheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, AddToScheme(scheme)
}
