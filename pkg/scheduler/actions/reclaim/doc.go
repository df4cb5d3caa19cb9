// Package reclaim lets a pending job take resources from jobs of other queues, when the
// fair-share plugin allows it (the reclaimer's queue is below its share, the victim's above).
// Priorities are not compared: reclaim restores fairness between queues.
package reclaim
