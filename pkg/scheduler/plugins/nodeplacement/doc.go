// Package nodeplacement scores nodes so that pods pack onto the fullest nodes (binpack, the
// default: whole nodes stay free for large gangs) or spread over the emptiest (spread), chosen
// separately for GPUs and CPUs.
package nodeplacement
