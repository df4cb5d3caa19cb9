package main

// pin is one module version and the CRD files taken from it, as paths inside the module.
type pin struct {
	Module, Version string
	Files           []string
}

// pins are the real CRDs of the workload kinds, each from a module the Go module proxy serves.
// A change here changes the output directory.
var pins = []pin{
	// PyTorchJob, TFJob and XGBoostJob kubeflow.org/v1. Not its kubeflow.org_mpijobs.yaml: that
	// is MPIJob kubeflow.org/v1, while clusters run the MPI operator v2's MPIJob v2beta1 under
	// the same CRD name (test/crds/mpijobs.kubeflow.org.yaml, the MPI operator's module not
	// being served).
	{Module: "github.com/kubeflow/training-operator", Version: "v1.8.1", Files: []string{
		"manifests/base/crds/kubeflow.org_pytorchjobs.yaml",
		"manifests/base/crds/kubeflow.org_tfjobs.yaml",
		"manifests/base/crds/kubeflow.org_xgboostjobs.yaml",
	}},
	// JAXJob kubeflow.org/v1 alone from v1.9.3: the training operator added JAXJob in v1.9, and
	// v1.8.1, from which the other kinds come, has none.
	{Module: "github.com/kubeflow/training-operator", Version: "v1.9.3", Files: []string{
		"manifests/base/crds/kubeflow.org_jaxjobs.yaml",
	}},
	// TrainJob trainer.kubeflow.org/v1alpha1. Creating one needs no runtime object (no
	// webhook runs in envtest), so the TrainingRuntime CRDs are left out.
	{Module: "github.com/kubeflow/trainer/v2", Version: "v2.0.0", Files: []string{
		"manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml",
	}},
	// RayCluster, RayJob and RayService ray.io/v1 (and v1alpha1, served, not stored).
	{Module: "github.com/ray-project/kuberay/ray-operator", Version: "v1.5.0", Files: []string{
		"config/crd/bases/ray.io_rayclusters.yaml",
		"config/crd/bases/ray.io_rayjobs.yaml",
		"config/crd/bases/ray.io_rayservices.yaml",
	}},
	// Service, Configuration and Revision serving.knative.dev/v1.
	{Module: "knative.dev/serving", Version: "v0.51.0", Files: []string{
		"config/core/300-resources/service.yaml",
		"config/core/300-resources/configuration.yaml",
		"config/core/300-resources/revision.yaml",
	}},
}
