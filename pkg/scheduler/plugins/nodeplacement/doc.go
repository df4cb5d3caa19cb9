// Package nodeplacement scores nodes so that pods pack onto the fullest nodes (binpack: whole
// nodes stay free for large gangs) or spread over the emptiest (spread), chosen separately for
// GPUs and CPUs, and chooses the device a GPU share goes to. For GPUs the default,
// fragmentation, places shares where what stays free best serves the cluster's mix of GPU
// requests (fragmentation.go), and packs when the mix holds no share.
package nodeplacement
