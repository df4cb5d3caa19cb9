// Package consolidation moves running pods so that a pending job fits: when a job fits
// nowhere as things stand, but would if some running preemptible pods went to other nodes
// (or a share to another device of its node), those pods are evicted, to be recreated and
// placed where they fit, and the job is promised what they free. A move is an eviction: it
// restarts the moved job, so min-runtime protects against it as against any eviction, a plan
// is carried out only when every moved pod fits elsewhere at once, and a cycle moves at most
// a configured number of jobs (upstream KAI-Scheduler's --max-consolidation-preemptees).
package consolidation
