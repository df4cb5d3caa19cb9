// Package helm checks the chart in deployments/kai-scheduler with the pinned helm binary:
// it lints, renders a configuration the scheduler itself accepts with the min-runtimes the
// values set, rolls pods when the configuration changes, refuses bad values before anything
// reaches a cluster, lets the scheduler watch every kind it watches and ships their CRDs, and
// renders GPU sharing's objects (installed on an envtest API server, when KUBEBUILDER_ASSETS
// is set, to check its RBAC and the certificate's keeping across upgrades). Installing the
// scheduler is tested by the end-to-end suite.
package helm
