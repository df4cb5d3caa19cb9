// Package allocate places pending jobs on idle resources: a job's gang (MinMember pods, and
// each sub-group's minimum) all at once or not at all, then further pods of elastic jobs one
// at a time. A gang that fits only with resources still being released is pipelined: promised
// those resources, bound in a later cycle.
package allocate
