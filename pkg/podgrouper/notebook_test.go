package podgrouper_test

import "testing"

// A Kubeflow Notebook is a PodGroup of its one pod at build priority.
func TestNotebookGang(t *testing.T) {
	notebook := workload("kubeflow.org/v1", "Notebook", "lab", map[string]any{"template": map[string]any{}})
	set := workload("apps/v1", "StatefulSet", "lab", nil)
	controls(notebook, set)
	checkKindCases(t, []kindCase{
		{name: "a Notebook", pod: podOf("lab-0", nil, set), objects: kindObjects(notebook, set),
			group: "pg-lab-uid-lab", minMember: 1, priority: "build"},
	})
}
