// Package scheduling holds the names shared by every version of the scheduling.run.ai API
// group: the group itself and the labels and annotations that KAI-compatible workloads carry,
// and the format of the annotations' values where they have one (the start stamp), so that
// the scheduler that writes them, the cache that reads them and kai-sim agree.
// The versioned types live in the v2 (Queue) and v2alpha2 (PodGroup) subpackages.
package scheduling
