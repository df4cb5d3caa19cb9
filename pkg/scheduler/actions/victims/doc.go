// Package victims is the one victim search shared by reclaim and preempt. For a pending job it
// plans which running pods to evict so that the job's gang fits, evicting as little and as
// cheaply as it can. The two actions differ only in their Rules: which jobs may be victims
// and how victim queues rank.
//
// The search is node-centric: each pod of the gang goes to the node that needs the cheapest
// evictions, where resources already being released cost nothing. Victim units (a surplus pod
// of an elastic job, or a job's whole gang) are ranked once in a stable order; a node's cost
// is the worst rank it needs and how many units. Plugin scenario filters vet each unit as it
// joins the plan; a unit they reject is skipped, never poisoning the units after it.
package victims
