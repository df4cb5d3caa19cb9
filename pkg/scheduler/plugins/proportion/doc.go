// Package proportion shares the cluster fairly between queues. Each cycle it computes every
// queue's fair share (deserved quota first, the rest by priority and over-quota weight, see
// FairShares), then:
//   - orders queues for allocation, least served first, comparing sibling branches;
//   - refuses allocations beyond a queue's limit, and non-preemptible jobs beyond deserved
//     quota, at every level of the tree;
//   - vets reclaim scenarios: a reclaimer's branch must stay within its share (or quota)
//     while every victim's branch is above its own, between the two branches under their
//     lowest common ancestor;
//   - tells where each queue stands (QueueShare), for its status, metrics and explanations;
//   - vets finished reclaim and preempt plans: no queue may grow above its fair share
//     through an eviction plan (the gang, less the victims under it), or it would be
//     reclaimed from at once. So evictions can never bounce resources back and forth.
package proportion
