// Package helm checks the chart in deployments/kai-scheduler with the pinned helm binary:
// it lints, renders a configuration the scheduler itself accepts with the min-runtimes the
// values set, rolls pods when the configuration changes, and refuses bad values before
// anything reaches a cluster. Installing it is tested by the end-to-end suite.
package helm
