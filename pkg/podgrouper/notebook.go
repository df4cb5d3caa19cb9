package podgrouper

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var notebookKind = schema.GroupKind{Group: "kubeflow.org", Kind: "Notebook"}

func init() { register(notebook, notebookKind) }

// notebook groups a Kubeflow Notebook (Notebook → StatefulSet → Pod) as the one pod it is, at
// build priority: someone works in it interactively, and that ranks apart from both training
// and serving.
func notebook(w *Workload) (Gang, error) {
	return Gang{Object: w.Top(), MinMember: 1, DefaultPriority: BuildPriority}, nil
}
