package install

import (
	"k8s.io/apimachinery/pkg/runtime"

	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

var schemeBuilder = runtime.NewSchemeBuilder(v2.AddToScheme, v2alpha2.AddToScheme)

// AddToScheme adds Queue (v2) and PodGroup (v2alpha2) to a scheme.
var AddToScheme = schemeBuilder.AddToScheme
